import { MessageChannel, receiveMessageOnPort } from "node:worker_threads";
import { startModuleWorker } from "../core/module-worker.js";
import type { PreparedFile, PreparedMessage, PrepareSetup, ReadyMessage, ToWorkerMessage } from "./ingest-worker.js";

export type { PreparedFile } from "./ingest-worker.js";

/** An ingestion's files being prepared in the ingestion worker, taken in order. */
export interface PreparedFiles {
  /** The next file, in the order of `setup.files`. Rejects when the worker failed. */
  next(): Promise<PreparedFile>;
  /** Stops the worker, whether or not every file was taken. */
  close(): Promise<void>;
}

/** A page of the chatbot's stored documents. */
export type StoredPage = { source: string; content_hash: string }[];

/**
 * Starts the ingestion worker on `setup.files`: it reads, chunks and (hash
 * embedder) embeds them on another core while this thread writes, keeping at
 * most `setup.ahead` chunks' worth prepared and not yet taken. `stored` pages
 * through the chatbot's documents, which are passed on page by page (a long
 * list read and copied at once would hold this thread): the worker reads files
 * meanwhile but prepares none before it has them all.
 *
 * @example
 * const files = prepareFiles({ files, chunking, hashDimension: 384, ahead: 256 }, storedPages());
 * try { const first = await files.next(); } finally { await files.close(); }
 */
export function prepareFiles(setup: Omit<PrepareSetup, "port">, stored: AsyncIterable<StoredPage>): PreparedFiles {
  /*
   * Prepared files come through a port of their own, read only when taken: a message event would copy each into
   * this thread's heap on arrival, where files waiting their turn outlived young-generation collections and were
   * left for full ones (longer pauses). The worker says on its own port that a file is ready.
   */
  const { port1: prepared, port2 } = new MessageChannel();
  const worker = startModuleWorker(import.meta.url, "ingest-worker", { workerData: { ...setup, port: port2 } satisfies PrepareSetup, transferList: [port2] });
  let ready = 0;
  type Taker = { resolve: (file: PreparedFile) => void; reject: (error: Error) => void };
  let waiting: Taker | undefined;
  let failure: Error | undefined;
  let closed = false;

  const take = ({ resolve, reject }: Taker) => {
    ready--;
    const received = receiveMessageOnPort(prepared);
    if (!received) return reject(new Error("Ingestion worker announced a file that did not arrive"));
    const { file, weight } = received.message as PreparedMessage;
    worker.postMessage({ taken: weight } satisfies ToWorkerMessage);
    resolve(file);
  };
  const fail = (error: Error) => {
    failure ??= error;
    waiting?.reject(failure);
    waiting = undefined;
  };

  worker.on("message", (message: ReadyMessage) => {
    if ("crashed" in message) return fail(new Error(`Ingestion worker failed: ${message.crashed}`));
    ready++;
    if (waiting) {
      const taker = waiting;
      waiting = undefined;
      take(taker);
    }
  });
  worker.on("error", fail);
  void (async () => {
    const send = (page: StoredPage, complete: boolean) =>
      worker.postMessage({ stored: { sources: page.map((d) => d.source), hashes: page.map((d) => d.content_hash) }, complete } satisfies ToWorkerMessage);
    try {
      for await (const page of stored) {
        if (closed) return;
        send(page, false);
      }
      if (!closed) send([], true);
    } catch (error) {
      fail(error instanceof Error ? error : new Error(String(error)));
    }
  })();
  worker.on("exit", (code) => {
    if (!closed) fail(new Error(`Ingestion worker stopped (exit code ${code})`));
  });

  return {
    next() {
      // A turn of the event loop per file, as when each was read here: files prepared while this thread was writing
      // arrive together, and taking them in one turn would run several writes back to back without a break.
      if (ready > 0) return new Promise((resolve, reject) => setImmediate(() => take({ resolve, reject })));
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => (waiting = { resolve, reject }));
    },
    async close() {
      closed = true;
      prepared.close();
      await worker.terminate();
    },
  };
}
