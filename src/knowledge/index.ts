import type { ResolvedConfig } from "../core/config.js";
import type { Chatbots } from "../core/chatbots.js";
import { ChatsvcError } from "../core/errors.js";
import type { ChangeFeed, KnowledgeStore, LeaseStore } from "../core/storage/index.js";
import { createEmbedder, type Embedder } from "./embedders/index.js";
import { createQuestionMatcher } from "./question-match.js";
import { createHybridSearch, fullTextHits } from "./search.js";
import type { HybridSearch, TextHits, VectorLoad } from "./search-thread.js";
import { createSyncRounds } from "./sync-round.js";
import type { ChatSearchOptions, Knowledge } from "./types.js";
import { createVectorIndex } from "./vectors.js";

/** Where searches run, and the vector copies they use: this thread, or a search thread. */
interface SearchPlace {
  search: HybridSearch;
  load: VectorLoad;
}

/**
 * The knowledge base of every chatbot: loaders, chunking, embeddings and
 * hybrid search over the knowledge store. Exposed as `service.knowledge`.
 *
 * @example
 * const knowledge = createKnowledge(storage, config, chatbots);
 * await knowledge.ingest("demo", ["./docs"]);
 * const hits = await knowledge.search("demo", "How do I create an API key?");
 */
export function createKnowledge(
  { knowledge: store, changes, leases }: { knowledge: KnowledgeStore; changes: ChangeFeed; leases: LeaseStore },
  config: ResolvedConfig,
  chatbots: Pick<Chatbots, "get" | "list">,
  /**
   * Where searches (and the vectors they use) run instead, given this thread's search and vector load and the
   * search's full-text step (a search thread: search-thread.ts).
   */
  { searchIn }: { searchIn?: (here: SearchPlace, textHits: TextHits) => SearchPlace } = {},
): Knowledge & { stopPreloads(): Promise<void> } {
  const vectors = createVectorIndex(store, changes);
  // The embedder is built on first use so that merely opening the service never needs a model server.
  let model: Embedder | undefined;
  const embedder = () => (model ??= createEmbedder(config.embedModel, config));
  const here: SearchPlace = { search: createHybridSearch({ store, vectors, embedder }), load: (chatbotId, signal) => vectors.load(chatbotId, signal) };
  const place = searchIn ? searchIn(here, (chatbotId, query, k) => fullTextHits(store, chatbotId, query, k)) : here;
  const hybrid = place.search;
  const closestQuestion = createQuestionMatcher(embedder);
  const deps = { store, vectors, embedder, chunking: config.chunking, fetching: config.ingest };
  const idOf = async (slug: string) => (await chatbots.get(slug)).id;
  const rounds = createSyncRounds(deps, leases, chatbots);

  const searchChatbot = async (chatbotId: number, query: string, { k = config.retrieval.k, includeBelowThreshold = false, extract = false }: ChatSearchOptions = {}) => {
    if (typeof query !== "string") throw ChatsvcError.validation({ query: ["The query must be a string."] });
    if (!Number.isInteger(k) || k < 1) throw ChatsvcError.validation({ k: ["k must be a positive integer."] });
    return hybrid(chatbotId, query, { k: Math.min(k, 100), threshold: config.retrieval.threshold, includeBelowThreshold, extract });
  };

  /** Aborted when the service closes: loads ahead stop, and the service waits for those under way (`stopPreloads`). */
  const closing = new AbortController();
  const preloads = new Set<Promise<unknown>>();
  const preloadAll = async (signal: AbortSignal) => {
    let chatbots = 0;
    let loaded = 0;
    try {
      // One chatbot at a time, each yielding between pages: searches go on meanwhile.
      for (const chatbotId of await store.chatbotsWithChunks()) {
        if (signal.aborted) break;
        loaded += await place.load(chatbotId, signal);
        chatbots++;
      }
    } catch (error) {
      // Closing may end a read under way; loading ahead is then simply over.
      if (!closing.signal.aborted) throw error;
    }
    return { chatbots, vectors: loaded };
  };
  const preload = ({ signal }: { signal?: AbortSignal } = {}) => {
    // The caller's signal or closing, with listeners removed afterwards (AbortSignal.any's sources keep references on Node 20).
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    const sources = [closing.signal, ...(signal ? [signal] : [])];
    for (const source of sources) source.addEventListener("abort", onAbort, { once: true });
    if (sources.some((source) => source.aborted)) stop.abort();
    const running = preloadAll(stop.signal);
    preloads.add(running);
    const done = () => {
      preloads.delete(running);
      for (const source of sources) source.removeEventListener("abort", onAbort);
    };
    void running.then(done, done);
    return running;
  };

  // Ingestion, reindexing and sync load on use: their loaders (HTML and sitemap parsing, fetching) are most of the
  // knowledge code, and a service that only searches, or a CLI command that lists keys, never runs them.
  return {
    ingest: async (slug, inputs, options) => (await import("./ingest.js")).ingest(deps, await idOf(slug), inputs, options),
    search: async (slug, query, options) => searchChatbot(await idOf(slug), query, options),
    searchChatbot,
    preload,
    list: async (slug) => store.documents(await idOf(slug)),
    async remove(slug, documentId) {
      if (!(await store.removeDocument(await idOf(slug), documentId))) throw ChatsvcError.notFound(`Document ${documentId} not found in chatbot "${slug}"`);
    },
    reindex: async (slug) => (await import("./reindex.js")).reindex(deps, slug === undefined ? "all" : [await idOf(slug)]),
    hasKnowledge: (chatbotId) => store.hasChunks(chatbotId),
    sync: async (slug, options) => (await import("./sync.js")).syncChatbot(deps, await idOf(slug), options),
    syncAll: (options) => rounds.syncAll(options),
    onSyncRound: (listener) => rounds.onSyncRound(listener),
    closestQuestion,
    /** Stops loads ahead and waits for the reads under way (searches in a search thread stop with the thread). */
    async stopPreloads() {
      closing.abort();
      await Promise.allSettled([...preloads]);
    },
  };
}
