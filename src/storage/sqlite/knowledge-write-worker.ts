// The bulk knowledge writer's entry (built as its own file, `knowledge-write-worker.js`): runs an ingestion's or a
// sync's write transactions and full-text merges on a connection of its own, so the event loop that asked for them
// keeps turning while SQLite works (knowledge-writer.ts starts it and sends the batches).
import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";
import { yieldCpuToProcess } from "../../core/thread-priority.js";
import type { DocumentBatch } from "../../core/storage/index.js";
import { createFullTextMerger } from "./fts-merge.js";
import { createBatchWrite } from "./knowledge-write.js";
import { writerTransaction } from "./write-gate.js";

export interface WriterSetup {
  file: string;
  /** The main connection's, so a write waits for another connection's lock as long as it would there. */
  busyTimeoutMs: number;
  /** Likewise the main connection's: the log this connection starts over is cut back as there. */
  journalSizeLimit: number;
  /** The write gate's cells (write-gate.ts): each transaction here passes through it. */
  gate: Int32Array;
}

export type ToWriter = { id: number; batch: DocumentBatch } | { stop: true };
export type FromWriter = { id: number; written: { added: number; updated: number } } | { id: number; error: { message: string; code?: string } };

// Bulk writes are background work, as preparing the files is (ingest-worker.ts): when they compete with the
// event loop for a core, the event loop comes first.
yieldCpuToProcess();

const { file, busyTimeoutMs, journalSizeLimit, gate } = workerData as WriterSetup;
const db = new Database(file, { fileMustExist: true });
// The same settings as every connection (open.ts); foreign keys delete a replaced document's vectors with its chunks.
db.pragma("synchronous = NORMAL");
db.pragma("foreign_keys = ON");
db.pragma(`busy_timeout = ${busyTimeoutMs}`);
db.pragma("secure_delete = FAST");
db.pragma(`journal_size_limit = ${journalSizeLimit}`);
const write = createBatchWrite(db);
const merger = createFullTextMerger(db, (step) => writerTransaction(gate, step));
const port = parentPort!;

// One batch at a time, in order: the main thread awaits each before sending the next.
let queue = Promise.resolve();
port.on("message", (message: ToWriter) => {
  if ("stop" in message) {
    queue = queue.then(() => {
      db.close();
      port.close();
    });
    return;
  }
  queue = queue.then(async () => {
    let reply: FromWriter;
    try {
      reply = { id: message.id, written: writerTransaction(gate, () => write.immediate(message.batch)) };
    } catch (error) {
      const { message: text, code } = error as { message?: string; code?: unknown };
      reply = { id: message.id, error: { message: text ?? String(error), ...(typeof code === "string" && { code }) } };
    }
    // Answered once merged, as a write on the main connection is (knowledge.ts): the index is whole when it resolves.
    if ("written" in reply) await merger.settle();
    port.postMessage(reply);
  });
});
