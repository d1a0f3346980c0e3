import type { Sqlite } from "./open.js";

/** Cells of the shared array: the writer thread holds (or waits for) the write lock; this thread writes; writes wait here. */
const WRITER = 0;
const WRITING = 1;
const WAITING = 2;

/**
 * How long the writer thread lets waiting writes of the event loop's thread
 * go first before it takes the lock anyway: theirs are a request's few rows,
 * its own a batch that must also get through under steady traffic.
 */
const WRITER_YIELD_MS = 20;

/**
 * How often writes that found another process's lock try again. That
 * process's writer leaves the lock free only briefly between transactions,
 * and SQLite's busy handler tries ever more rarely, so a write often slept
 * through many of those gaps. A try costs a few microseconds, and the
 * waiting writes share each (see `retryTick`).
 */
const RETRY_MS = 2;

/**
 * The write lock of one database file, between the event loop's connection
 * and the knowledge writer thread's. SQLite lets a write that finds the lock
 * taken wait in its busy handler, which sleeps the calling thread at growing
 * intervals: on the event loop's thread that stalls every request meanwhile,
 * and the sleeps overshoot the writer's short transactions. With the gate a
 * write of this thread that would collide with the writer's transaction
 * waits for its end without blocking (`Atomics.waitAsync`), and the writer
 * lets such writes in before its next transaction. The handshake is Dekker's:
 * each side raises its flag, then reads the other's, so both never go ahead.
 * The lock of another process (`chatsvc ingest` while `serve` runs) is not
 * visible here: with `sqlite` given, a write runs with the busy handler off
 * and, when SQLite answers SQLITE_BUSY (nothing was written), is tried again
 * after a timer, until the connection's busy timeout has passed. The writes
 * of requests and of the background work that runs alongside an ingestion or
 * a sync pass through it (conversations, messages and their charge, shared
 * commits, widget budgets, key use, idempotency keys, leads, the health probe,
 * leases, a sync's web-page checks); an operator's edits still wait in the
 * busy handler. A write made while no writer runs pays a few atomic
 * operations and two pragma calls.
 */
export interface WriteGate {
  /** Shared with the writer thread (see {@link writerTransaction}). */
  readonly cells: Int32Array;
  /** Runs `write` (synchronous SQLite work) now, or once the writer thread is between transactions and no other process holds the lock. */
  run<T>(write: () => T): T | Promise<T>;
  /** The writer thread is gone (stopped or failed): whatever it held is free. */
  writerGone(): void;
}

type Attempt<T> = { done: true; value: T } | { done: false; busy?: unknown };

const isBusy = (error: unknown) => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
};

export function createWriteGate(sqlite?: Sqlite): WriteGate {
  const cells = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  const busyTimeoutMs = sqlite ? (sqlite.pragma("busy_timeout", { simple: true }) as number) : 0;
  // Plucked: the cheapest way to run a pragma through better-sqlite3 (no row object).
  const busyWaitOff = sqlite?.prepare("PRAGMA busy_timeout = 0").pluck();
  const busyWaitOn = sqlite?.prepare(`PRAGMA busy_timeout = ${busyTimeoutMs}`).pluck();

  /** Runs the write with the busy handler off: another connection's lock throws SQLITE_BUSY at once. */
  const withoutBusyWait = <T>(write: () => T): T => {
    if (!busyWaitOff) return write();
    busyWaitOff.get();
    try {
      return write();
    } finally {
      busyWaitOn!.get();
    }
  };

  // The next try for writes waiting on another process's lock: they wake together and try in turn (oldest first)
  // until one finds the lock taken, which marks the tick busy; the others then wait for the next.
  let tick: { at: Promise<void>; busy: boolean } | undefined;
  const retryTick = () => {
    if (tick) return tick;
    const next = { busy: false, at: new Promise<void>((resolve) => setTimeout(resolve, RETRY_MS)).then(() => void (tick = undefined)) };
    return (tick = next);
  };

  /** Writes at once when the writer thread holds nothing and no other process holds the lock. */
  const tryWrite = <T>(write: () => T): Attempt<T> => {
    // Only this thread counts itself in: a write inside another already holds the gate and the lock, and must not wait for them.
    if (Atomics.load(cells, WRITING) !== 0) return { done: true, value: write() };
    Atomics.store(cells, WRITING, 1);
    try {
      if (Atomics.load(cells, WRITER) !== 0) return { done: false };
      return { done: true, value: withoutBusyWait(write) };
    } catch (error) {
      if (isBusy(error)) return { done: false, busy: error };
      throw error;
    } finally {
      Atomics.store(cells, WRITING, 0);
      Atomics.notify(cells, WRITING);
    }
  };

  const waitThenWrite = async <T>(write: () => T, first: Attempt<T>): Promise<T> => {
    Atomics.add(cells, WAITING, 1);
    let busySince: number | undefined;
    try {
      let attempt = first;
      for (;;) {
        if (attempt.done) return attempt.value;
        if (!("busy" in attempt)) {
          const waited = Atomics.waitAsync(cells, WRITER, 1);
          if (waited.async) await waited.value;
          // Only waits for another process's lock count towards the busy timeout, as before.
          busySince = undefined;
          attempt = tryWrite(write);
          continue;
        }
        busySince ??= performance.now();
        // As with SQLite's busy handler: once the busy timeout has passed, SQLITE_BUSY is the answer.
        if (performance.now() - busySince >= busyTimeoutMs) throw attempt.busy;
        const next = retryTick();
        await next.at;
        if (next.busy) continue;
        attempt = tryWrite(write);
        if (!attempt.done && "busy" in attempt) next.busy = true;
      }
    } finally {
      Atomics.sub(cells, WAITING, 1);
      Atomics.notify(cells, WAITING);
    }
  };

  return {
    cells,
    run(write) {
      const attempt = tryWrite(write);
      return attempt.done ? attempt.value : waitThenWrite(write, attempt);
    },
    writerGone() {
      Atomics.store(cells, WRITER, 0);
      Atomics.notify(cells, WRITER);
    },
  };
}

/**
 * On the writer thread: runs one of its write transactions under the gate.
 * Waiting writes of the event loop's thread go first (up to a bound), and one
 * it has begun is finished before the transaction starts; the event loop's
 * writes wait meanwhile without blocking.
 */
export function writerTransaction<T>(cells: Int32Array, transaction: () => T): T {
  const yieldUntil = performance.now() + WRITER_YIELD_MS;
  for (let waiting = Atomics.load(cells, WAITING); waiting > 0; waiting = Atomics.load(cells, WAITING)) {
    const left = yieldUntil - performance.now();
    if (left <= 0) break;
    Atomics.wait(cells, WAITING, waiting, left);
  }
  Atomics.store(cells, WRITER, 1);
  try {
    while (Atomics.load(cells, WRITING) !== 0) Atomics.wait(cells, WRITING, 1);
    return transaction();
  } finally {
    Atomics.store(cells, WRITER, 0);
    Atomics.notify(cells, WRITER);
  }
}
