import type { Worker } from "node:worker_threads";
import { startModuleWorker } from "../../core/module-worker.js";
import type { CheckpointSetup, ToCheckpointWorker } from "./checkpoint-worker.js";
import type { Sqlite } from "./open.js";

/** SQLite's default: the committing connection checkpoints once the log holds this many pages. */
const AUTOCHECKPOINT_PAGES = 1000;

/**
 * While the checkpointer runs, the committing connection still checkpoints if
 * the log reaches this many pages: the checkpointer fell behind, or its
 * checkpoints never found the log complete (writes came in between), and only
 * a checkpoint that finds nothing left lets the next write start the log over.
 */
const FALLBACK_AUTOCHECKPOINT_PAGES = 16 * AUTOCHECKPOINT_PAGES;

/** How often the checkpointer copies the log into the database file. */
const INTERVAL_MS = 100;

/**
 * Writes this close together are bulk writes: the checkpointer starts at the
 * second of them (one write alone, a single file or page, is not worth a
 * thread), and stops this long after the last.
 */
const IDLE_MS = 2_000;

/** Checkpoints of a connection's write-ahead log during bulk writes. */
export interface WalCheckpoints {
  /** A bulk write is about to run (knowledge writes, a burst of commits): from the second in a row, checkpoints move to their own thread until writes pause. */
  busy(): void;
  /** Stops the checkpointer, if running; before the connection closes. */
  close(): Promise<void>;
}

/**
 * Moves a file database's WAL checkpoints off this thread while bulk writes
 * (ingestion, sync) run. SQLite checkpoints in the connection that commits
 * once the log is long enough: every few batches a commit also wrote the
 * log's pages into the database file and fsynced both, which on a busy disk
 * held the event loop far longer than the write itself. During bulk writes a
 * worker thread with its own connection checkpoints instead, and this
 * connection only when the worker falls far behind; after a pause the worker
 * stops and SQLite's default returns. Best effort: when the worker cannot
 * start, checkpoints stay where they were.
 *
 * @example
 * const checkpoints = createWalCheckpoints(sqlite);
 * checkpoints.busy(); writeBatch();
 * await checkpoints.close(); sqlite.close();
 */
export function createWalCheckpoints(sqlite: Sqlite): WalCheckpoints {
  let worker: Worker | undefined;
  let idle: NodeJS.Timeout | undefined;
  let lastBusy = -Infinity;
  // A worker that failed is not started again: checkpoints stay with the committing connection.
  let failed = false;

  const stop = async () => {
    clearTimeout(idle);
    idle = undefined;
    const stopping = worker;
    worker = undefined;
    if (!stopping) return;
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    const exited = new Promise<void>((resolve) => stopping.once("exit", () => resolve()));
    // Unreferenced while it runs (it must not keep a process alive), but the wait for its end must.
    stopping.ref();
    stopping.postMessage({ stop: true } satisfies ToCheckpointWorker);
    await exited;
  };

  return {
    busy() {
      if (sqlite.memory || !sqlite.open || failed) return;
      const now = performance.now();
      const inRow = now - lastBusy < IDLE_MS;
      lastBusy = now;
      if (!worker) {
        if (!inRow) return;
        try {
          worker = startModuleWorker(import.meta.url, "checkpoint-worker", { workerData: { file: sqlite.name, intervalMs: INTERVAL_MS } satisfies CheckpointSetup });
        } catch {
          failed = true;
          return;
        }
        const started = worker;
        started.on("error", () => {
          failed = true;
          if (worker === started) void stop();
        });
        started.unref();
        sqlite.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
      }
      clearTimeout(idle);
      idle = setTimeout(() => void stop(), IDLE_MS).unref();
    },
    close: stop,
  };
}
