// The search thread's entry (built as its own file, `search-worker.js`): runs hybrid searches for
// search-thread.ts on a read-only connection of its own, with its own vector index, so a chat turn's
// retrieval runs beside the event loop instead of on it.
import { parentPort, workerData } from "node:worker_threads";
import { collectGarbage } from "../core/collect-garbage.js";
import type { ResolvedConfig } from "../core/config.js";
import { ChatsvcError } from "../core/errors.js";
import { openSearchReader, type SqliteReaderSetup } from "../storage/sqlite/search-reader.js";
import { createEmbedder, type Embedder } from "./embedders/index.js";
import { prepareExpansion } from "./expansion.js";
import { extractAnswer } from "./extract.js";
import { createHybridSearch, type HybridSearchOptions } from "./search.js";
import type { RetrievedChunk } from "./types.js";
import { contentTerms } from "./text/tokens.js";
import { sentenceVector } from "./text/word-vectors.js";
import { createVectorIndex } from "./vectors.js";

export interface SearchWorkerSetup extends SqliteReaderSetup {
  embedModel: string;
  /** What a model embedder needs besides its spec (plain values: they cross to the thread). */
  embedder: Pick<ResolvedConfig, "ollamaHost" | "openaiBaseUrl" | "openaiApiKey" | "modelTimeoutMs">;
}

/** A search, then its full-text hits (found by the calling thread meanwhile), then the next search's; or a chatbot's vectors to load ahead. */
export type ToSearchWorker =
  | { id: number; chatbotId: number; query: string; options: Omit<HybridSearchOptions, "textHits"> }
  | { id: number; textHits: number[] }
  | { id: number; load: number }
  | { release: true }
  | { stop: true };

/** A refusal crosses as its fields (a `ChatsvcError` does not survive structured cloning as one). */
export interface SearchFailure {
  message: string;
  status?: number;
  errors?: ChatsvcError["errors"];
  details?: ChatsvcError["details"];
}

/** `ready` once the database is open and the text steps are warm (`warmUp`); then one answer per search or load (the vectors loaded). */
export type FromSearchWorker =
  | { ready: true }
  | { id: number; chunks: RetrievedChunk[]; extract?: string | null }
  | { id: number; loaded: number }
  | { id: number; error: SearchFailure };

const setup = workerData as SearchWorkerSetup;
const reader = openSearchReader(setup);
let model: Embedder | undefined;
const embedder = () => (model ??= createEmbedder(setup.embedModel, setup.embedder));
const vectors = createVectorIndex(reader.reads, reader.changes);
const search = createHybridSearch({ store: reader.reads, vectors, embedder });
/** Aborted when the thread is asked to stop: a load ahead under way ends at its next page. */
const loading = new AbortController();
const port = parentPort!;
warmUp();
port.postMessage({ ready: true } satisfies FromSearchWorker);
let pending = 0;
let stopping = false;
/** Searches under way whose full-text hits have not arrived yet, by id. */
const hitsFor = new Map<number, (hits: number[]) => void>();

const stop = () => {
  reader.close();
  port.close();
};

port.on("message", (message: ToSearchWorker) => {
  if ("stop" in message) {
    stopping = true;
    loading.abort();
    if (pending === 0) stop();
    return;
  }
  if ("release" in message) {
    reader.releaseMemory();
    return void collectGarbage();
  }
  if ("textHits" in message) {
    hitsFor.get(message.id)?.(message.textHits);
    hitsFor.delete(message.id);
    return;
  }
  pending++;
  if ("load" in message) {
    vectors.load(message.load, loading.signal).then(
      (loaded) => answer({ id: message.id, loaded }),
      (error: unknown) => answer({ id: message.id, error: failureOf(error) }),
    );
    return;
  }
  const textHits = new Promise<number[]>((resolve) => hitsFor.set(message.id, resolve));
  // A failure to read the snapshot's version fails this search, like any read of it.
  new Promise<void>((resolve) => resolve(reader.fresh()))
    .then(() => search(message.chatbotId, message.query, { ...message.options, textHits }))
    .then(
      (chunks) => answer({ id: message.id, chunks, ...(message.options.extract && extractOf(message.query, chunks)) }),
      (error: unknown) => answer({ id: message.id, error: failureOf(error) }),
    );
});

/**
 * The extractive answer over the chunks, worked out here when asked: it is the rest of that turn's CPU on
 * them. Left to the caller when there is nothing to extract from, or when extracting fails (it fails there alike).
 */
function extractOf(question: string, chunks: RetrievedChunk[]): { extract?: string | null } {
  if (chunks.length === 0) return {};
  try {
    return { extract: extractAnswer(question, chunks) };
  } catch {
    return {};
  }
}

/**
 * One question through the text steps a search and an extractive answer take, before the thread says it is
 * ready: the thesaurus and the word vectors load, and V8 compiles those steps, while the service starts rather
 * than during a visitor's first search.
 */
function warmUp(): void {
  const question = "How do I create an API key for the widget?";
  prepareExpansion(question, true).finish(contentTerms(question));
  sentenceVector(contentTerms(question));
  const chunk = { chunk_id: 0, document_id: 0, content: "Create an API key for the widget with the CLI:\n\n- `keys create` makes one.", heading: "API keys", name: "warm-up.md", type: "file", url: null, score: 1 };
  extractAnswer(question, [chunk]);
}

function answer(reply: FromSearchWorker): void {
  port.postMessage(reply);
  if (--pending === 0 && stopping) stop();
}

function failureOf(error: unknown): SearchFailure {
  if (!(error instanceof ChatsvcError)) return { message: error instanceof Error ? error.message : String(error) };
  return { message: error.message, status: error.status, ...(error.errors && { errors: error.errors }), ...(error.details && { details: error.details }) };
}
