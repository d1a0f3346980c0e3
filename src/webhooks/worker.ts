import type { Sqlite } from "../core/db/open.js";
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

interface Finished {
  row: DueRow;
  outcome: AttemptOutcome;
}

interface DueRow {
  id: number;
  webhook_id: number;
  message_id: string;
  payload: string;
  attempts: number;
  url: string;
  secret: string;
}

/**
 * Delivers the outbox: claims due rows (leasing them by moving their
 * `next_attempt_at` past the attempt timeout, so another process sharing the
 * database leaves them alone, and a crashed process's rows come back due once
 * the lease runs out), sends them with bounded concurrency and records each
 * outcome with the webhook's counters in one transaction. Failures are retried
 * on the configured schedule; `Retry-After` on 429/503 can stretch a delay but
 * never adds attempts; 410 deactivates the webhook.
 *
 * @example
 * const worker = createDeliveryWorker(db.$client, sender, config.webhooks);
 * worker.start();
 * await worker.stop();
 */
export function createDeliveryWorker(sqlite: Sqlite, sender: Sender, options: WorkerOptions): DeliveryWorker {
  const { retryDelaysMs, timeoutMs, concurrency, pollIntervalMs = 1_000, onError = (e) => console.error("chatsvc: webhook delivery failed", e) } = options;
  const leaseMs = timeoutMs + LEASE_MARGIN_MS;

  const due = sqlite.prepare<[number, number], DueRow>(
    `SELECT d.id, d.webhook_id, d.message_id, d.payload, d.attempts, w.url, w.secret
       FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND w.is_active = 1
      ORDER BY d.next_attempt_at, d.id LIMIT ?`,
  );
  const lease = sqlite.prepare<[number, number]>("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ?");
  // ORDER BY + LIMIT walks the due index and stops at the first row; MIN() over the join would scan every pending row.
  const nextDue = sqlite
    .prepare<[], number>(
      `SELECT d.next_attempt_at FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.status = 'pending' AND w.is_active = 1 ORDER BY d.next_attempt_at LIMIT 1`,
    )
    .pluck();
  const finishRow = sqlite.prepare<{ id: number; status: string; attempts: number; next: number; code: number | null; error: string | null; now: string }>(
    `UPDATE webhook_deliveries SET status = @status, attempts = @attempts, next_attempt_at = @next, last_status = @code, last_error = @error, updated_at = @now
      WHERE id = @id AND status = 'pending'`,
  );
  const count = sqlite.prepare<{ id: number; total: number; failed: number; now: string }>(
    `UPDATE webhooks SET total_triggers = total_triggers + @total, failed_triggers = failed_triggers + @failed, last_triggered_at = @now
      WHERE id = @id`,
  );
  const noteFailure = sqlite.prepare<{ id: number; code: number | null; error: string; now: string }>(
    "UPDATE webhooks SET last_failure_at = @now, last_failure_status = @code, last_failure_error = @error WHERE id = @id",
  );
  const deactivate = sqlite.prepare<[string, number]>("UPDATE webhooks SET is_active = 0, updated_at = ? WHERE id = ?");
  const dropPending = sqlite.prepare<[string, string, number]>(
    "UPDATE webhook_deliveries SET status = 'failed', last_error = ?, updated_at = ? WHERE webhook_id = ? AND status = 'pending'",
  );
  // A finished row's next_attempt_at is when it finished, so the due index serves this too.
  const prune = sqlite.prepare<[number]>("DELETE FROM webhook_deliveries WHERE status IN ('delivered', 'failed') AND next_attempt_at < ?");
  const release = sqlite.prepare<[number, number]>("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ? AND status = 'pending'");

  const record = (row: DueRow, outcome: AttemptOutcome) => {
    const nowMs = Date.now();
    const now = new Date(nowMs).toISOString();
    const attempts = row.attempts + 1;
    let status = "pending";
    let next = nowMs;
    if (outcome.ok || outcome.gone || attempts > retryDelaysMs.length) {
      status = outcome.ok ? "delivered" : "failed";
    } else {
      const scheduled = retryDelaysMs[attempts - 1]!;
      next = nowMs + Math.max(scheduled, Math.min(outcome.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
    }
    const changed = finishRow.run({ id: row.id, status, attempts, next, code: outcome.status, error: outcome.ok ? null : outcome.error, now }).changes;
    // The row is gone (webhook deleted) or another process finished it: nothing to count.
    if (changed === 0) return;
    count.run({ id: row.webhook_id, total: row.attempts === 0 ? 1 : 0, failed: status === "failed" ? 1 : 0, now });
    if (!outcome.ok) noteFailure.run({ id: row.webhook_id, code: outcome.status, error: outcome.error, now });
    if (!outcome.ok && outcome.gone) {
      deactivate.run(now, row.webhook_id);
      dropPending.run("Not sent: the webhook was deactivated (410 Gone)", now, row.webhook_id);
    }
  };

  // One transaction per turn of the event loop records every finished attempt
  // and claims the next rows: at thousands of deliveries a second, per-row
  // transactions would be the bottleneck.
  const settle = sqlite.transaction((results: Finished[], now: number, limit: number) => {
    for (const { row, outcome } of results) record(row, outcome);
    if (limit <= 0) return [];
    const rows = due.all(now, limit);
    for (const row of rows) lease.run(now + leaseMs, row.id);
    return rows;
  });

  const inFlight = new Map<number, Promise<void>>();
  const finished: Finished[] = [];
  let running = false;
  let stopped = false;
  let detached = false;
  let pumpQueued = false;
  let timer: NodeJS.Timeout | undefined;
  let prunedAt = 0;

  /** Records finished attempts and, unless stopping, claims rows for the free slots. */
  const flush = (claimLimit: number): DueRow[] => {
    const results = finished.splice(0);
    try {
      return settle.immediate(results, Date.now(), claimLimit);
    } catch (error) {
      // Unrecorded attempts stay leased and are retried once the lease runs out.
      onError(error);
      return [];
    }
  };

  const pump = () => {
    pumpQueued = false;
    if (!running || stopped) return;
    clearTimeout(timer);
    const free = concurrency - inFlight.size;
    if (free <= 0 && finished.length === 0) return;
    const now = Date.now();
    if (now - prunedAt > PRUNE_INTERVAL_MS) {
      prunedAt = now;
      try {
        prune.run(now - RETENTION_MS);
      } catch (error) {
        onError(error);
      }
    }
    const rows = flush(free);
    // A row still in flight here (its lease ran out under a stalled event loop) is not sent twice at once.
    for (const row of rows) if (!inFlight.has(row.id)) send(row);
    // A full batch means more may be due: a finishing delivery wakes the pump.
    if (rows.length < free) sleepUntil(nextDue.get() ?? now + pollIntervalMs);
  };

  const sleepUntil = (at: number) => {
    clearTimeout(timer);
    timer = setTimeout(wake, Math.min(Math.max(at - Date.now(), 5), pollIntervalMs));
    timer.unref();
  };

  const wake = () => {
    if (pumpQueued || !running || stopped) return;
    pumpQueued = true;
    // setImmediate: the outbox calls this inside a transaction; look after it has committed.
    setImmediate(pump);
  };

  const send = (row: DueRow) => {
    const attempt = sender
      .send({ url: row.url, key: secretKey(row.secret), messageId: row.message_id, payload: row.payload })
      .then((outcome) => {
        if (!detached) finished.push({ row, outcome });
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
      if (inFlight.size > 0) {
        let timeout: NodeJS.Timeout | undefined;
        await Promise.race([Promise.allSettled(inFlight.values()), new Promise((resolve) => (timeout = setTimeout(resolve, graceMs)))]);
        clearTimeout(timeout);
      }
      detached = true;
      flush(0);
      if (inFlight.size > 0) {
        // Unfinished rows are due again at once for the next start instead of waiting out their lease.
        const now = Date.now();
        try {
          sqlite.transaction(() => {
            for (const id of inFlight.keys()) release.run(now, id);
          }).immediate();
        } catch (error) {
          onError(error);
        }
      }
      sender.close();
    },
  };
}
