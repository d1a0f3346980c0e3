import type { AttemptRecord, DueDelivery, OutboxStore } from "../core/storage/index.js";
import type { AttemptOutcome, Sender } from "./deliver.js";
import { secretKey } from "./signing.js";

export interface WorkerOptions {
  /** Delays before each retry (ms); their number is the retry budget. */
  retryDelaysMs: number[];
  /** Per-attempt timeout (ms): a claimed row is leased for this long plus a margin. */
  timeoutMs: number;
  /** Deliveries in flight at once. */
  concurrency: number;
  /** Longest the worker sleeps before looking for rows other processes queued. Default 1 000 ms. */
  pollIntervalMs?: number;
  /** Where unexpected failures (e.g. a locked database) are reported. Default `console.error`. */
  onError?: (error: unknown) => void;
}

export interface DeliveryWorker {
  /** Begins delivering; resumes whatever an earlier process left pending. */
  start(): void;
  /** Looks for due rows soon (after the current transaction, if any, has ended). */
  wake(): void;
  /**
   * Takes no new work, waits up to `graceMs` for deliveries in flight, then
   * cancels the rest and hands their rows back as due for the next start.
   */
  stop(graceMs?: number): Promise<void>;
}

/** A `Retry-After` longer than this is not waited for in full. */
const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;
/** Margin past the attempt timeout before another process may take over a claimed row. */
const LEASE_MARGIN_MS = 1_000;
/** Finished rows are kept this long (for inspection), then pruned. */
const RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Delivers the outbox: claims due rows (leasing them past the attempt timeout,
 * so another process or instance sharing the database leaves them alone, and a
 * crashed one's rows come back due once the lease runs out), sends them with
 * bounded concurrency and records each outcome with the webhook's counters in
 * one storage write. Failures are retried on the configured schedule;
 * `Retry-After` on 429/503 can stretch a delay but never adds attempts; 410
 * deactivates the webhook.
 *
 * @example
 * const worker = createDeliveryWorker(storage.outbox, sender, config.webhooks);
 * worker.start();
 * await worker.stop();
 */
export function createDeliveryWorker(outbox: OutboxStore, sender: Sender, options: WorkerOptions): DeliveryWorker {
  const { retryDelaysMs, timeoutMs, concurrency, pollIntervalMs = 1_000, onError = (e) => console.error("chatsvc: webhook delivery failed", e) } = options;
  const leaseMs = timeoutMs + LEASE_MARGIN_MS;

  /** How an attempt's outcome is recorded: delivered, failed for good, or pending for its retry. */
  const toRecord = (row: DueDelivery, outcome: AttemptOutcome): AttemptRecord => {
    const nowMs = Date.now();
    const attempts = row.attempts + 1;
    let status: AttemptRecord["status"] = "pending";
    let next = nowMs;
    if (outcome.ok || outcome.gone || attempts > retryDelaysMs.length) {
      status = outcome.ok ? "delivered" : "failed";
    } else {
      const scheduled = retryDelaysMs[attempts - 1]!;
      next = nowMs + Math.max(scheduled, Math.min(outcome.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
    }
    return {
      delivery_id: row.id,
      webhook_id: row.webhook_id,
      status,
      attempts,
      next_attempt_at: next,
      http_status: outcome.status,
      error: outcome.ok ? null : outcome.error,
      first_attempt: row.attempts === 0,
      gone: !outcome.ok && outcome.gone === true,
      now: new Date(nowMs).toISOString(),
    };
  };

  const inFlight = new Map<number, Promise<void>>();
  const finished: AttemptRecord[] = [];
  let running = false;
  let stopped = false;
  let detached = false;
  let pumpQueued = false;
  /** The pump turn under way: one at a time, so rows are never claimed twice by this process. */
  let pumping: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let prunedAt = 0;

  /** Records finished attempts and claims rows for `claimLimit` free slots, in one write. */
  const flush = async (claimLimit: number): Promise<DueDelivery[]> => {
    const results = finished.splice(0);
    const now = Date.now();
    try {
      return await outbox.settle(results, { now, limit: claimLimit, leaseUntil: now + leaseMs });
    } catch (error) {
      // Unrecorded attempts stay leased and are retried once the lease runs out.
      onError(error);
      return [];
    }
  };

  const pump = async () => {
    if (!running || stopped) return;
    clearTimeout(timer);
    const free = concurrency - inFlight.size;
    if (free <= 0 && finished.length === 0) return;
    const now = Date.now();
    if (now - prunedAt > PRUNE_INTERVAL_MS) {
      prunedAt = now;
      await outbox.prune(now - RETENTION_MS).catch(onError);
    }
    const rows = await flush(free);
    if (stopped) {
      // Claimed while stopping: hand them straight back.
      await outbox.release(rows.map((row) => row.id), Date.now()).catch(onError);
      return;
    }
    // A row still in flight here (its lease ran out under a stalled event loop) is not sent twice at once.
    for (const row of rows) if (!inFlight.has(row.id)) send(row);
    // A full batch means more may be due: a finishing delivery wakes the pump.
    if (rows.length < free) {
      const next = await outbox.nextDue().catch((error: unknown) => {
        onError(error);
        return undefined;
      });
      sleepUntil(next ?? Date.now() + pollIntervalMs);
    }
  };

  const sleepUntil = (at: number) => {
    clearTimeout(timer);
    if (stopped) return;
    timer = setTimeout(wake, Math.min(Math.max(at - Date.now(), 5), pollIntervalMs));
    timer.unref();
  };

  const turn = () => {
    pumpQueued = false;
    if (pumping) {
      // Look again once the turn under way has ended.
      pumpQueued = true;
      return;
    }
    pumping = pump()
      .catch(onError)
      .finally(() => {
        pumping = undefined;
        if (pumpQueued) setImmediate(turn);
      });
  };

  const wake = () => {
    if (pumpQueued || !running || stopped) return;
    pumpQueued = true;
    // setImmediate: gather the wake-ups of one turn of the event loop into one pump.
    if (!pumping) setImmediate(turn);
  };

  const send = (row: DueDelivery) => {
    const attempt = sender
      .send({ url: row.url, key: secretKey(row.secret), messageId: row.message_id, payload: row.payload })
      .then((outcome) => {
        if (!detached) finished.push(toRecord(row, outcome));
      })
      .catch(onError)
      .finally(() => {
        inFlight.delete(row.id);
        wake();
      });
    inFlight.set(row.id, attempt);
  };

  return {
    start() {
      if (running || stopped) return;
      running = true;
      wake();
    },

    wake,

    async stop(graceMs = 2_000) {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      await pumping;
      if (inFlight.size > 0) {
        let timeout: NodeJS.Timeout | undefined;
        await Promise.race([Promise.allSettled(inFlight.values()), new Promise((resolve) => (timeout = setTimeout(resolve, graceMs)))]);
        clearTimeout(timeout);
      }
      detached = true;
      await flush(0);
      // Unfinished rows are due again at once for the next start instead of waiting out their lease.
      if (inFlight.size > 0) await outbox.release([...inFlight.keys()], Date.now()).catch(onError);
      sender.close();
    },
  };
}
