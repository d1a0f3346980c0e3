import type { ResolvedConfig } from "../config.js";
import type { Chatbots } from "../core/chatbots.js";
import type { Db } from "../core/db/open.js";
import { ChatsvcError } from "../core/errors.js";
import { createEmbedder, type Embedder } from "./embedders/index.js";
import { ingest } from "./ingest.js";
import { reindex } from "./reindex.js";
import { createHybridSearch } from "./search.js";
import { createDocumentStore } from "./store.js";
import type { Knowledge, SearchOptions } from "./types.js";
import { createVectorIndex } from "./vectors.js";

/**
 * The knowledge base of every chatbot: loaders, chunking, embeddings and
 * hybrid search over one SQLite database. Exposed as `service.knowledge`.
 *
 * @example
 * const knowledge = createKnowledge(db, config, chatbots);
 * await knowledge.ingest("demo", ["./docs"]);
 * const hits = await knowledge.search("demo", "How do I create an API key?");
 */
export function createKnowledge(db: Db, config: ResolvedConfig, chatbots: Pick<Chatbots, "get">): Knowledge {
  const sqlite = db.$client;
  const store = createDocumentStore(sqlite);
  const vectors = createVectorIndex(sqlite);
  // The embedder is built on first use so that merely opening the service never needs a model server.
  let model: Embedder | undefined;
  const embedder = () => (model ??= createEmbedder(config.embedModel, config));
  const hybrid = createHybridSearch({ sqlite, store, vectors, embedder });
  const deps = { sqlite, store, vectors, embedder, chunking: config.chunking, fetching: config.ingest };

  const searchChatbot = async (chatbotId: number, query: string, { k = config.retrieval.k, includeBelowThreshold = false }: SearchOptions = {}) => {
    if (typeof query !== "string") throw ChatsvcError.validation({ query: ["The query must be a string."] });
    if (!Number.isInteger(k) || k < 1) throw ChatsvcError.validation({ k: ["k must be a positive integer."] });
    return hybrid(chatbotId, query, { k: Math.min(k, 100), threshold: config.retrieval.threshold, includeBelowThreshold });
  };

  return {
    ingest: (slug, inputs, options) => ingest(deps, chatbots.get(slug).id, inputs, options),
    search: (slug, query, options) => searchChatbot(chatbots.get(slug).id, query, options),
    searchChatbot,
    list: (slug) => store.list(chatbots.get(slug).id),
    remove(slug, documentId) {
      const chatbotId = chatbots.get(slug).id;
      const removed = sqlite.transaction(() => store.deleteDocument(documentId, chatbotId)).immediate();
      if (!removed) throw ChatsvcError.notFound(`Document ${documentId} not found in chatbot "${slug}"`);
    },
    reindex: (slug) => reindex(deps, slug === undefined ? "all" : [chatbots.get(slug).id]),
    hasKnowledge: (chatbotId) => store.hasChunks(chatbotId),
    close() {},
  };
}
