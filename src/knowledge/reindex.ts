import type { KnowledgeStore } from "../core/storage/index.js";
import type { Embedder } from "./embedders/index.js";
import { embeddingText } from "./document-text.js";
import type { VectorIndex } from "./vectors.js";

const BATCH = 256;

/**
 * Re-embeds chunks with the configured embedder. With the recorded embedder
 * unchanged, only the given chatbots are redone; after an embedder switch every
 * chatbot is, since the vector table's dimension changes for all of them.
 * Embeddings are computed first, then swapped in with one storage write, so a
 * failed embedding call leaves the old vectors working.
 *
 * @example
 * await reindex(deps, [bot.id]);
 */
export async function reindex(
  { store, vectors, embedder }: { store: KnowledgeStore; vectors: VectorIndex; embedder: () => Embedder },
  chatbotIds: number[] | "all",
): Promise<{ chunks: number; ms: number }> {
  const started = performance.now();
  const model = embedder();
  const stored = await vectors.record();
  const switching = stored !== undefined && stored.spec !== model.spec;
  const bots = switching || chatbotIds === "all" ? await store.chatbotsWithChunks() : chatbotIds;

  const planned: { chatbot_id: number; chunk_id: number; vector: Float32Array }[] = [];
  let dimension = stored?.dimension;
  for (const chatbotId of bots) {
    const chunks = await store.chunksOfChatbot(chatbotId);
    for (let i = 0; i < chunks.length; i += BATCH) {
      const slice = chunks.slice(i, i + BATCH);
      const embedded = await model.embed(slice.map(embeddingText));
      slice.forEach((chunk, j) => planned.push({ chatbot_id: chatbotId, chunk_id: chunk.id, vector: embedded[j]! }));
      dimension = embedded[0]!.length;
    }
  }
  if (dimension === undefined) return { chunks: 0, ms: Math.round(performance.now() - started) };

  await store.replaceVectors({ spec: model.spec, dimension }, !stored || switching || stored.dimension !== dimension, planned);
  vectors.forgetRecord();
  return { chunks: planned.length, ms: Math.round(performance.now() - started) };
}
