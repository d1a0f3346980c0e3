import { startModuleWorker } from "../../core/module-worker.js";
import { createBulkWorker, type BulkWorker } from "./bulk-worker.js";
import type { CheckpointSetup } from "./checkpoint-worker.js";
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
  const bulk: BulkWorker = createBulkWorker(
    sqlite,
    () => {
      const started = startModuleWorker(import.meta.url, "checkpoint-worker", { workerData: { file: sqlite.name, intervalMs: INTERVAL_MS } satisfies CheckpointSetup });
      // A worker that failed is not started again: checkpoints stay with the committing connection.
      started.on("error", () => bulk.fail(started));
      sqlite.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
      return started;
    },
    {
      onStop: () => {
        if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
      },
    },
  );
  return {
    busy: () => void bulk.next(),
    close: bulk.stop,
  };
}
