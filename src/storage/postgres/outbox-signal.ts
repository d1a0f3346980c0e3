import pg from "pg";

const CHANNEL = "chatsvc_outbox";
/**
 * Every notifying commit takes a cluster-wide lock, so rows queued within this
 * window share one NOTIFY; the other instances' workers poll anyway, the
 * notification only saves them part of the wait.
 */
const DEBOUNCE_MS = 50;
const RECONNECT_MS = 1_000;

export interface OutboxSignal {
  /** After a commit that queued deliveries: tells the other instances, at most one NOTIFY per window. */
  queued(): void;
  /** Calls `onDue` when another instance queued deliveries. Returns a function that stops listening. */
  watch(onDue: () => void): () => void;
  close(): Promise<void>;
}

/**
 * LISTEN/NOTIFY as a wake-up hint for the webhook workers of other instances:
 * never one notification per event, and nothing relies on it (a lost
 * notification costs one poll interval).
 *
 * @example
 * const signal = createOutboxSignal(pool, url, console.error);
 * const stop = signal.watch(() => worker.wake());
 */
export function createOutboxSignal(pool: pg.Pool, url: string, onError: (error: unknown) => void): OutboxSignal {
  const watchers = new Set<() => void>();
  let pending: NodeJS.Timeout | undefined;
  let listener: pg.Client | undefined;
  let reconnect: NodeJS.Timeout | undefined;
  let closed = false;

  const notify = () => {
    pending = undefined;
    pool.query("SELECT pg_notify($1, '')", [CHANNEL]).catch(onError);
  };

  const listen = () => {
    if (closed || watchers.size === 0 || listener) return;
    const client = new pg.Client({ connectionString: url });
    listener = client;
    const retry = (error: unknown) => {
      if (listener !== client) return;
      listener = undefined;
      client.end().catch(() => {});
      if (closed) return;
      onError(error);
      reconnect = setTimeout(listen, RECONNECT_MS);
      reconnect.unref();
    };
    client.on("error", retry);
    client.on("notification", () => {
      for (const onDue of watchers) onDue();
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${CHANNEL}`))
      .then(() => {
        // Rows queued while no one listened are found by this wake-up.
        for (const onDue of watchers) onDue();
      })
      .catch(retry);
  };

  return {
    queued() {
      if (closed || pending) return;
      pending = setTimeout(notify, DEBOUNCE_MS);
      pending.unref();
    },
    watch(onDue) {
      watchers.add(onDue);
      listen();
      return () => {
        watchers.delete(onDue);
      };
    },
    async close() {
      closed = true;
      clearTimeout(reconnect);
      if (pending) {
        clearTimeout(pending);
        pending = undefined;
        await pool.query("SELECT pg_notify($1, '')", [CHANNEL]).catch(() => {});
      }
      const client = listener;
      listener = undefined;
      await client?.end().catch(() => {});
    },
  };
}
