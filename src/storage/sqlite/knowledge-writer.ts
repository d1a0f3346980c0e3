import type { Worker } from "node:worker_threads";
import { startModuleWorker } from "../../core/module-worker.js";
import type { DocumentBatch } from "../../core/storage/index.js";
import type { FromWriter, ToWriter, WriterSetup } from "./knowledge-write-worker.js";
import type { Sqlite } from "./open.js";

/**
 * Writes this close together are bulk writes: the second of them starts the
 * writer thread (one write alone, a single file or page, is not worth
 * starting it), which stops this long after the last.
 */
const IDLE_MS = 2_000;

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
 * (WAL); a write of theirs waits for the writer's lock, one transaction at
 * most. Best effort: when the worker cannot start or fails, writes stay here.
 *
 * @example
 * const writer = createKnowledgeWriter(sqlite);
 * await writer.write(batch, async () => writeHere(batch));
 * await writer.close(); sqlite.close();
 */
export function createKnowledgeWriter(sqlite: Sqlite): KnowledgeWriter {
  let worker: Worker | undefined;
  let idle: NodeJS.Timeout | undefined;
  let lastWrite = -Infinity;
  let failed = false;
  let nextId = 0;
  type Waiting = Map<number, { resolve: (written: Written) => void; reject: (error: Error) => void }>;
  // Per worker: one stopped after a pause must not take a later one's writes with it.
  const waitingOn = new WeakMap<Worker, Waiting>();

  const start = (): Worker | undefined => {
    let started: Worker;
    try {
      const setup: WriterSetup = {
        file: sqlite.name,
        busyTimeoutMs: sqlite.pragma("busy_timeout", { simple: true }) as number,
        journalSizeLimit: sqlite.pragma("journal_size_limit", { simple: true }) as number,
      };
      started = startModuleWorker(import.meta.url, "knowledge-write-worker", { workerData: setup });
    } catch {
      failed = true;
      return undefined;
    }
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
      if (worker === started) {
        failed = true;
        worker = undefined;
        clearTimeout(idle);
      }
      for (const { reject } of waiting.values()) reject(error);
      waiting.clear();
    };
    started.on("error", lost);
    started.on("exit", (code) => lost(new Error(`Knowledge writer stopped (exit code ${code})`)));
    // Unreferenced while idle (it must not keep a process alive); a write waiting for it references it.
    started.unref();
    return started;
  };

  const stop = async () => {
    clearTimeout(idle);
    idle = undefined;
    const stopping = worker;
    worker = undefined;
    if (!stopping) return;
    const exited = new Promise<void>((resolve) => stopping.once("exit", () => resolve()));
    stopping.ref();
    stopping.postMessage({ stop: true } satisfies ToWriter);
    await exited;
  };

  return {
    async write(batch, inThread) {
      const now = performance.now();
      const inRow = now - lastWrite < IDLE_MS;
      lastWrite = now;
      if (!worker && inRow && !failed && !sqlite.memory && sqlite.open) worker = start();
      const writer = worker;
      if (!writer) return inThread();
      clearTimeout(idle);
      idle = setTimeout(() => void stop(), IDLE_MS).unref();
      const id = nextId++;
      const waiting = waitingOn.get(writer)!;
      writer.ref();
      try {
        return await new Promise<Written>((resolve, reject) => {
          waiting.set(id, { resolve, reject });
          writer.postMessage({ id, batch } satisfies ToWriter);
        });
      } finally {
        if (waiting.size === 0 && worker === writer) writer.unref();
      }
    },
    close: stop,
  };
}
