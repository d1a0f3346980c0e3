import type { Worker } from "node:worker_threads";
import { ChatsvcError } from "../core/errors.js";
import { startModuleWorker } from "../core/module-worker.js";
import { rememberExtract } from "./extract.js";
import type { HybridSearchOptions } from "./search.js";
import type { FromSearchWorker, SearchFailure, SearchWorkerSetup, ToSearchWorker } from "./search-worker.js";
import type { RetrievedChunk } from "./types.js";

export type { SearchWorkerSetup };

export type HybridSearch = (chatbotId: number, query: string, options: HybridSearchOptions) => Promise<RetrievedChunk[]>;
/** A search's full-text step alone (`fullTextHits` in search.ts): chunk ids, best first. */
export type TextHits = (chatbotId: number, query: string, k: number) => Promise<number[]>;

/** Loads a chatbot's vectors ahead of its first search (`VectorIndex.load`): the vectors it then holds. */
export type VectorLoad = (chatbotId: number, signal: AbortSignal) => Promise<number>;

export interface SearchThread {
  search: HybridSearch;
  /** Loads a chatbot's vectors in the thread, where its searches will use them; stopping the thread ends a load under way. */
  load(chatbotId: number): Promise<number>;
  /** Asks the thread to free its connection's page cache and collect its garbage (a quiet server). */
  releaseMemory(): void;
  /** Lets searches under way finish, then stops the thread. */
  close(): Promise<void>;
  /**
   * Figures for tests and metrics: threads started so far, searches a thread answered, extractive answers it
   * worked out with them, and whether searches moved to the calling thread.
   */
  stats(): { threadsStarted: number; answered: number; extracts: number; inThread: boolean };
}

export interface SearchThreadOptions {
  /** Searches here instead, when no thread can start or open the database (and for good from then on). */
  inThread: HybridSearch;
  /** Loads vectors here instead, likewise. */
  loadInThread: VectorLoad;
  /** A search's full-text step, on this thread's connection while the worker thread runs the rest. */
  textHits: TextHits;
  /** Told why searches moved to this thread, or why a thread stopped. */
  onFailure: (error: Error) => void;
}

interface Waiting {
  /** The same request in this thread (when the thread never opened the database). */
  here(): Promise<unknown>;
  /** A search's question, for the extractive answer worked out with it. */
  question?: string;
  resolve(answer: unknown): void;
  reject(error: Error): void;
}

/** How long `close()` waits for searches under way before it stops the thread anyway. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Hybrid search in a worker thread with its own read-only connection and
 * vector index (`search-worker.ts`), so a chat turn's retrieval, the largest
 * share of its CPU, runs on another core while the event loop parses, stores
 * and answers other requests. The index lives in that thread
 * only: the main thread never loads it. A search's full-text step runs here,
 * while the thread works on the rest, and its hits follow the question there:
 * under load the thread is the busier of the two and this was its largest
 * step, and one search at a time is answered sooner for the two steps running
 * side by side. The thread starts with the service;
 * one that stops unexpectedly fails the searches it held and is replaced by
 * the next search. Where no thread can start or open the database, searches
 * run in the calling thread.
 *
 * @example
 * const thread = createSearchThread(setup, { inThread: hybrid, textHits: (id, question, k) => fullTextHits(store, id, question, k), onFailure: console.error });
 * await thread.search(botId, "How do I reset my password?", { k: 8, threshold: 0.2, includeBelowThreshold: false });
 * await thread.close();
 */
export function createSearchThread(setup: SearchWorkerSetup, { inThread, loadInThread, textHits, onFailure }: SearchThreadOptions): SearchThread {
  let worker: Worker | undefined;
  let fallback = false;
  let closing = false;
  let nextId = 1;
  let threadsStarted = 0;
  let answered = 0;
  let extracts = 0;
  const waiting = new Map<number, Waiting>();
  let exited: Promise<void> = Promise.resolve();
  /** Ends loads running in this thread (`loadInThread`) when the thread is closed. */
  const stopped = new AbortController();

  const start = (): Worker | undefined => {
    let started: Worker;
    try {
      started = startModuleWorker(import.meta.url, "search-worker", { workerData: setup });
    } catch (error) {
      moveInThread(error);
      return undefined;
    }
    threadsStarted++;
    let ready = false;
    started.unref();
    started.on("message", (reply: FromSearchWorker) => {
      if ("ready" in reply) return void (ready = true);
      const entry = waiting.get(reply.id);
      if (!entry) return;
      waiting.delete(reply.id);
      if (waiting.size === 0) started.unref();
      if (entry.question !== undefined) answered++;
      if ("chunks" in reply) {
        if (reply.extract !== undefined) {
          rememberExtract(reply.chunks, entry.question!, reply.extract);
          extracts++;
        }
        entry.resolve(reply.chunks);
      } else if ("loaded" in reply) entry.resolve(reply.loaded);
      else entry.reject(errorOf(reply.error));
    });
    let failure: Error | undefined;
    started.on("error", (error) => void (failure = error));
    exited = new Promise((resolve) =>
      started.once("exit", (code) => {
        if (worker === started) worker = undefined;
        const held = [...waiting.values()];
        waiting.clear();
        if (!ready && !closing) {
          // It never opened the database: the searches it held run here, as every later one will.
          moveInThread(failure ?? new Error(`it exited with code ${code} while starting`));
          for (const entry of held) entry.here().then(entry.resolve, entry.reject);
          resolve();
          return;
        }
        if (!closing) onFailure(new Error(`chatsvc: the search thread stopped (${failure?.message ?? `exit code ${code}`}); the next search starts another`));
        for (const entry of held) entry.reject(new Error("The search thread stopped before answering"));
        resolve();
      }),
    );
    return started;
  };

  const moveInThread = (error: unknown) => {
    if (fallback) return;
    fallback = true;
    onFailure(new Error(`chatsvc: searches run on the main thread: the search thread could not start (${error instanceof Error ? error.message : String(error)})`));
  };

  worker = start();

  return {
    async search(chatbotId, query, options) {
      if (fallback || closing) return inThread(chatbotId, query, options);
      worker ??= start();
      const running = worker;
      if (!running) return inThread(chatbotId, query, options);
      const id = nextId++;
      const answer = new Promise<RetrievedChunk[]>((resolve, reject) =>
        waiting.set(id, { here: () => inThread(chatbotId, query, options), question: query, resolve: resolve as Waiting["resolve"], reject }),
      );
      running.ref();
      running.postMessage({ id, chatbotId, query, options } satisfies ToSearchWorker);
      // Found while the thread expands and embeds the question and ranks its vector candidates; it waits for them only then.
      let hits: number[] = [];
      try {
        hits = await textHits(chatbotId, query, options.k);
      } catch (error) {
        // The thread's answer will find no one waiting; given no hits, it finishes that search.
        waiting.get(id)?.reject(error as Error);
        waiting.delete(id);
        if (waiting.size === 0) running.unref();
      }
      running.postMessage({ id, textHits: hits } satisfies ToSearchWorker);
      return answer;
    },
    async load(chatbotId) {
      if (closing) return 0;
      if (fallback) return loadInThread(chatbotId, stopped.signal);
      worker ??= start();
      const running = worker;
      if (!running) return loadInThread(chatbotId, stopped.signal);
      const id = nextId++;
      const answer = new Promise<number>((resolve, reject) =>
        waiting.set(id, { here: () => loadInThread(chatbotId, stopped.signal), resolve: resolve as Waiting["resolve"], reject }),
      );
      running.ref();
      running.postMessage({ id, load: chatbotId } satisfies ToSearchWorker);
      return answer;
    },
    stats: () => ({ threadsStarted, answered, extracts, inThread: fallback }),
    releaseMemory() {
      worker?.postMessage({ release: true } satisfies ToSearchWorker);
    },
    async close() {
      if (closing) return exited;
      closing = true;
      stopped.abort();
      const running = worker;
      if (!running) return;
      running.postMessage({ stop: true } satisfies ToSearchWorker);
      const timer = setTimeout(() => void running.terminate(), CLOSE_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

function errorOf({ message, status, errors, details }: SearchFailure): Error {
  return status === undefined ? new Error(message) : new ChatsvcError(status, message, { ...(errors && { errors }), ...(details && { details }) });
}
