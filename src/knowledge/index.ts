import type { ResolvedConfig } from "../core/config.js";
import type { Chatbots } from "../core/chatbots.js";
import { ChatsvcError } from "../core/errors.js";
import type { ChangeFeed, KnowledgeStore, LeaseStore } from "../core/storage/index.js";
import { createEmbedder, type Embedder } from "./embedders/index.js";
import { createQuestionMatcher } from "./question-match.js";
import { createHybridSearch, fullTextHits } from "./search.js";
import type { HybridSearch, TextHits } from "./search-thread.js";
import { createSyncRounds } from "./sync-round.js";
import type { ChatSearchOptions, Knowledge } from "./types.js";
import { createVectorIndex } from "./vectors.js";

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
  /** Where searches run instead, given the search of this thread and its full-text step (a search thread: search-thread.ts). */
  { searchIn }: { searchIn?: (inThread: HybridSearch, textHits: TextHits) => HybridSearch } = {},
): Knowledge {
  const vectors = createVectorIndex(store, changes);
  // The embedder is built on first use so that merely opening the service never needs a model server.
  let model: Embedder | undefined;
  const embedder = () => (model ??= createEmbedder(config.embedModel, config));
  const inThread = createHybridSearch({ store, vectors, embedder });
  const hybrid = searchIn ? searchIn(inThread, (chatbotId, query, k) => fullTextHits(store, chatbotId, query, k)) : inThread;
  const closestQuestion = createQuestionMatcher(embedder);
  const deps = { store, vectors, embedder, chunking: config.chunking, fetching: config.ingest };
  const idOf = async (slug: string) => (await chatbots.get(slug)).id;
  const rounds = createSyncRounds(deps, leases, chatbots);

  const searchChatbot = async (chatbotId: number, query: string, { k = config.retrieval.k, includeBelowThreshold = false, extract = false }: ChatSearchOptions = {}) => {
    if (typeof query !== "string") throw ChatsvcError.validation({ query: ["The query must be a string."] });
    if (!Number.isInteger(k) || k < 1) throw ChatsvcError.validation({ k: ["k must be a positive integer."] });
    return hybrid(chatbotId, query, { k: Math.min(k, 100), threshold: config.retrieval.threshold, includeBelowThreshold, extract });
  };

  // Ingestion, reindexing and sync load on use: their loaders (HTML and sitemap parsing, fetching) are most of the
  // knowledge code, and a service that only searches, or a CLI command that lists keys, never runs them.
  return {
    ingest: async (slug, inputs, options) => (await import("./ingest.js")).ingest(deps, await idOf(slug), inputs, options),
    search: async (slug, query, options) => searchChatbot(await idOf(slug), query, options),
    searchChatbot,
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
  };
}
