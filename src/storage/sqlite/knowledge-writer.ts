import type { Worker } from "node:worker_threads";
import { startModuleWorker } from "../../core/module-worker.js";
import type { DocumentBatch } from "../../core/storage/index.js";
import { createBulkWorker, type BulkWorker } from "./bulk-worker.js";
import type { FromWriter, ToWriter, WriterSetup } from "./knowledge-write-worker.js";
import type { Sqlite } from "./open.js";
import type { WriteGate } from "./write-gate.js";

type Written = { added: number; updated: number };

/** Knowledge writes, on this thread or, during bulk writes, on the writer thread. */
export interface KnowledgeWriter {
  /** Runs `inThread` here, or sends the batch to the writer thread when writes come in a row. */
  write(batch: DocumentBatch, inThread: () => Promise<Written>): Promise<Written>;
  /** Stops the writer thread, if running, once its writes are done; before the connection closes. */
  close(): Promise<void>;
}

/**
 * Moves a file database's knowledge writes off this thread while they come
 * in a row (ingestion, sync). A batch's transaction (FTS5 tokenising every
 * chunk and writing a segment at the commit) and the merge steps after it
 * held the event loop for tens of milliseconds each, and longer whenever
 * another thread or process had the core; in a worker thread with its own
 * connection they hold only that thread. Requests keep reading meanwhile
 * (WAL); their writes through `gate` wait for the end of the writer's
 * transaction without blocking. Best effort: when the worker cannot start or
 * fails, writes stay here.
 *
 * @example
 * const writer = createKnowledgeWriter(sqlite, createWriteGate());
 * await writer.write(batch, async () => writeHere(batch));
 * await writer.close(); sqlite.close();
 */
export function createKnowledgeWriter(sqlite: Sqlite, gate: WriteGate): KnowledgeWriter {
  let nextId = 0;
  type Waiting = Map<number, { resolve: (written: Written) => void; reject: (error: Error) => void }>;
  // Per worker: one stopped after a pause must not take a later one's writes with it.
  const waitingOn = new WeakMap<Worker, Waiting>();

  const bulk: BulkWorker = createBulkWorker(sqlite, () => {
    const setup: WriterSetup = {
      file: sqlite.name,
      busyTimeoutMs: sqlite.pragma("busy_timeout", { simple: true }) as number,
      journalSizeLimit: sqlite.pragma("journal_size_limit", { simple: true }) as number,
      gate: gate.cells,
    };
    const started = startModuleWorker(import.meta.url, "knowledge-write-worker", { workerData: setup });
    const waiting: Waiting = new Map();
    waitingOn.set(started, waiting);
    started.on("message", (message: FromWriter) => {
      const pending = waiting.get(message.id);
      waiting.delete(message.id);
      if (!pending) return;
      if ("written" in message) return pending.resolve(message.written);
      pending.reject(Object.assign(new Error(message.error.message), message.error.code && { code: message.error.code }));
    });
    const lost = (error: Error) => {
      // A thread that died inside a transaction left the gate closed; its connection's lock went with it.
      gate.writerGone();
      if (bulk.current() === started) bulk.fail(started);
      for (const { reject } of waiting.values()) reject(error);
      waiting.clear();
    };
    started.on("error", lost);
    started.on("exit", (code) => lost(new Error(`Knowledge writer stopped (exit code ${code})`)));
    return started;
  });

  return {
    write: (batch, inThread) =>
      bulk.during(async (writer) => {
        if (!writer) return inThread();
        const id = nextId++;
        const waiting = waitingOn.get(writer)!;
        // Unreferenced while idle (it must not keep a process alive); a write waiting for it references it.
        writer.ref();
        try {
          return await new Promise<Written>((resolve, reject) => {
            waiting.set(id, { resolve, reject });
            writer.postMessage({ id, batch } satisfies ToWriter);
          });
        } finally {
          if (waiting.size === 0 && bulk.current() === writer) writer.unref();
        }
      }),
    close: bulk.stop,
  };
}
