import { embedInBatches } from "./batches.js";
import type { Embedder } from "./types.js";

const BATCH = 64;

interface EmbeddingsResponse {
  data: { index: number; embedding: number[] }[];
}

/**
 * Embeddings from an OpenAI-compatible `/embeddings` endpoint (`openai:<model>`), sent in batches.
 *
 * @example
 * const embedder = createOpenAIEmbedder("text-embedding-3-small", { baseUrl: "https://api.openai.com/v1", apiKey });
 */
export function createOpenAIEmbedder(model: string, { baseUrl, apiKey, timeoutMs = 60_000 }: { baseUrl: string; apiKey?: string | undefined; timeoutMs?: number }): Embedder {
  const spec = `openai:${model}`;
  return {
    spec,
    dimension: undefined,
    embed: (texts) =>
      embedInBatches(texts, { spec, server: baseUrl, size: BATCH }, async (input) => {
        // Loaded on use: only a service that embeds through such a server needs it.
        const { ofetch } = await import("ofetch");
        const response = await ofetch<EmbeddingsResponse>(`${baseUrl}/embeddings`, {
          method: "POST",
          body: { model, input },
          headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
          timeout: timeoutMs,
          retry: 1,
        });
        // The answer lists vectors with their input index, not necessarily in order.
        return Array.isArray(response?.data) ? [...response.data].sort((a, b) => a.index - b.index).map((d) => d.embedding) : undefined;
      }),
  };
}
