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
 * The write lock of one database file, between the event loop's connection
 * and the knowledge writer thread's. SQLite lets a write that finds the lock
 * taken wait in its busy handler, which sleeps the calling thread at growing
 * intervals: on the event loop's thread that stalls every request meanwhile,
 * and the sleeps overshoot the writer's short transactions. With the gate a
 * write of this thread that would collide with the writer's transaction
 * waits for its end without blocking (`Atomics.waitAsync`), and the writer
 * lets such writes in before its next transaction. The writes of requests
 * and of the background work that runs alongside an ingestion or a sync pass
 * through it (conversations, messages and their charge, shared commits,
 * widget budgets, key use, idempotency keys, leads, the health probe, leases,
 * a sync's web-page checks); an operator's edits still wait in the busy
 * handler. A write made while no writer runs pays a few atomic operations. The handshake is Dekker's: each
 * side raises its flag, then reads the other's, so both never go ahead.
 */
export interface WriteGate {
  /** Shared with the writer thread (see {@link writerTransaction}). */
  readonly cells: Int32Array;
  /** Runs `write` (synchronous SQLite work) now, or once the writer thread is between transactions. */
  run<T>(write: () => T): T | Promise<T>;
  /** The writer thread is gone (stopped or failed): whatever it held is free. */
  writerGone(): void;
}

export function createWriteGate(): WriteGate {
  const cells = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));

  /** Writes at once when the writer holds nothing; false when it does. */
  const tryWrite = <T>(write: () => T): { done: true; value: T } | { done: false } => {
    // Only this thread counts itself in: a write inside another already holds the gate, and must not wait for it.
    if (Atomics.load(cells, WRITING) !== 0) return { done: true, value: write() };
    Atomics.store(cells, WRITING, 1);
    try {
      if (Atomics.load(cells, WRITER) !== 0) return { done: false };
      return { done: true, value: write() };
    } finally {
      Atomics.store(cells, WRITING, 0);
      Atomics.notify(cells, WRITING);
    }
  };

  const waitThenWrite = async <T>(write: () => T): Promise<T> => {
    Atomics.add(cells, WAITING, 1);
    try {
      for (;;) {
        const waited = Atomics.waitAsync(cells, WRITER, 1);
        if (waited.async) await waited.value;
        const attempt = tryWrite(write);
        if (attempt.done) return attempt.value;
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
      return attempt.done ? attempt.value : waitThenWrite(write);
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
