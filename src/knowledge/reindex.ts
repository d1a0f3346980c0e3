import type { Sqlite } from "../core/db/open.js";
import type { Embedder } from "./embedders/index.js";
import { embeddingText } from "./ingest.js";
import type { DocumentStore } from "./store.js";
import type { VectorIndex } from "./vectors.js";

const BATCH = 256;

/**
 * Re-embeds chunks with the configured embedder. With the recorded embedder
 * unchanged, only the given chatbots are redone; after an embedder switch every
 * chatbot is, since the vector table's dimension changes for all of them.
 * Embeddings are computed first, then swapped in with one transaction, so a
 * failed embedding call leaves the old vectors working.
 *
 * @example
 * await reindex(deps, [bot.id]);
 */
export async function reindex(
  { sqlite, store, vectors, embedder }: { sqlite: Sqlite; store: DocumentStore; vectors: VectorIndex; embedder: () => Embedder },
  chatbotIds: number[] | "all",
): Promise<{ chunks: number; ms: number }> {
  const started = performance.now();
  const model = embedder();
  const stored = vectors.record();
  const switching = stored !== undefined && stored.spec !== model.spec;
  const bots = switching || chatbotIds === "all" ? store.botsWithChunks() : chatbotIds;

  // Per chatbot: chunk ids and their new vectors, in the same order.
  const plans: { chatbotId: number; ids: number[]; vectors: Float32Array[] }[] = [];
  let dimension = stored?.dimension;
  for (const chatbotId of bots) {
    const ids: number[] = [];
    const out: Float32Array[] = [];
    let texts: string[] = [];
    for (const chunk of store.chunksOfBot(chatbotId)) {
      ids.push(chunk.id);
      texts.push(embeddingText(chunk));
      if (texts.length === BATCH) {
        out.push(...(await model.embed(texts)));
        texts = [];
      }
    }
    if (texts.length > 0) out.push(...(await model.embed(texts)));
    if (out.length > 0) dimension = out[0]!.length;
    plans.push({ chatbotId, ids, vectors: out });
  }
  if (dimension === undefined) return { chunks: 0, ms: Math.round(performance.now() - started) };

  let written = 0;
  sqlite
    .transaction(() => {
      if (!stored || switching || stored.dimension !== dimension) vectors.recreate(model.spec, dimension!);
      for (const plan of plans) {
        plan.ids.forEach((id, i) => vectors.replace(id, plan.chatbotId, plan.vectors[i]!));
        written += plan.ids.length;
      }
    })
    .immediate();
  return { chunks: written, ms: Math.round(performance.now() - started) };
}
