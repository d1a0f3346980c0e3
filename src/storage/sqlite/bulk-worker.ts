import type { Worker } from "node:worker_threads";

/**
 * Operations this close together are bulk work: the worker starts at the
 * second of them (one alone, a single file or page, is not worth a thread),
 * and stops this long after the last has ended.
 */
const IDLE_MS = 2_000;

/** A worker thread that takes over a connection's bulk work while it comes in a row (see {@link createBulkWorker}). */
export interface BulkWorker {
  /** An operation is about to run: the worker to hand it to, or undefined to run it in this thread. */
  next(): Worker | undefined;
  /**
   * Runs an operation that takes a while, with the worker to hand it to (or
   * undefined: this thread). The pause that stops the worker, and the one that
   * makes the next operation not in a row, count from its end: a slow
   * operation (a large batch, a wait for another connection's lock) neither
   * stops the worker under it nor sends the next one back to this thread.
   */
  during<T>(run: (worker: Worker | undefined) => Promise<T>): Promise<T>;
  /** The worker running now, if any. */
  current(): Worker | undefined;
  /** Gives up on workers (`worker` failed): none is started again and operations stay in this thread; a current `worker` is dropped as if stopped. */
  fail(worker: Worker): void;
  /** Stops the worker, if running, once it has done what it was sent; before the connection closes. */
  stop(): Promise<void>;
}

/**
 * The life of a worker thread for bulk work on a file database (WAL
 * checkpoints, knowledge writes): started by the second operation within
 * 2 s of the one before (of its end, for one run through `during`), kept
 * while they keep coming, stopped 2 s after the last with a
 * `{stop: true}` message it answers by exiting; `onStop` then undoes what
 * starting it changed on the connection. Unreferenced while it runs, so it
 * never keeps a process alive. Best effort: when `start` throws, no worker is
 * started again and operations stay in this thread.
 *
 * @example
 * const bulk = createBulkWorker(sqlite, () => startModuleWorker(import.meta.url, "checkpoint-worker"));
 * bulk.next(); // undefined, then the worker from the second call within 2 s
 */
export function createBulkWorker(
  sqlite: { readonly memory: boolean; readonly open: boolean },
  start: () => Worker,
  { onStop }: { onStop?: () => void } = {},
): BulkWorker {
  let worker: Worker | undefined;
  let idle: NodeJS.Timeout | undefined;
  let last = -Infinity;
  let failed = false;
  let running = 0;

  const idleFromNow = () => {
    clearTimeout(idle);
    idle = worker && running === 0 ? setTimeout(() => void stop(), IDLE_MS).unref() : undefined;
  };

  const stop = async () => {
    clearTimeout(idle);
    idle = undefined;
    const stopping = worker;
    worker = undefined;
    if (!stopping) return;
    onStop?.();
    const exited = new Promise<void>((resolve) => stopping.once("exit", () => resolve()));
    // The wait for its end must keep the process alive.
    stopping.ref();
    stopping.postMessage({ stop: true });
    await exited;
  };

  const next = () => {
    if (sqlite.memory || !sqlite.open || failed) return undefined;
    const now = performance.now();
    const inRow = now - last < IDLE_MS;
    last = now;
    if (!worker) {
      if (!inRow) return undefined;
      try {
        worker = start();
      } catch {
        failed = true;
        return undefined;
      }
      worker.unref();
    }
    idleFromNow();
    return worker;
  };

  return {
    next,
    async during(run) {
      running++;
      try {
        return await run(next());
      } finally {
        running--;
        last = performance.now();
        idleFromNow();
      }
    },
    current: () => worker,
    fail(failedWorker) {
      failed = true;
      if (worker !== failedWorker) return;
      worker = undefined;
      clearTimeout(idle);
      idle = undefined;
      onStop?.();
    },
    stop,
  };
}
