// The WAL checkpointer's entry (built as its own file, `checkpoint-worker.js`): copies committed pages from the
// write-ahead log into the database file on a connection of its own, so a checkpoint's page writes and fsyncs
// block this thread instead of the one that committed (wal-checkpoints.ts starts and stops it).
import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";

export interface CheckpointSetup {
  file: string;
  /** How long between two checkpoints. */
  intervalMs: number;
}

/** From the main thread: stop (the worker closes its connection and ends). */
export type ToCheckpointWorker = { stop: true };

const { file, intervalMs } = workerData as CheckpointSetup;
const db = new Database(file, { fileMustExist: true });
// A checkpoint's fsyncs follow its own connection's setting: the same as every connection's (open.ts).
db.pragma("synchronous = NORMAL");
// PASSIVE never waits for readers or writers: it copies what it can now and leaves the rest for the next one.
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
const timer = setInterval(() => {
  try {
    checkpoint.run();
  } catch {
    // Busy or failing now: the next interval tries again, and the committing connection's own checkpoints remain.
  }
}, intervalMs);
parentPort!.on("message", (_: ToCheckpointWorker) => {
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
