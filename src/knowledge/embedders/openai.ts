import { ofetch } from "ofetch";
import { ChatsvcError } from "../../core/errors.js";
import { normalize, type Embedder } from "./types.js";

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
    async embed(texts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += BATCH) {
        const input = texts.slice(i, i + BATCH);
        let response: EmbeddingsResponse;
        try {
          response = await ofetch<EmbeddingsResponse>(`${baseUrl}/embeddings`, {
            method: "POST",
            body: { model, input },
            headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
            timeout: timeoutMs,
            retry: 1,
          });
        } catch (error) {
          throw new ChatsvcError(502, `Embedding with ${spec} at ${baseUrl} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        }
        if (!Array.isArray(response?.data) || response.data.length !== input.length) {
          throw new ChatsvcError(502, `Embedding with ${spec} failed: expected ${input.length} embeddings, got ${Array.isArray(response?.data) ? response.data.length : "none"}`);
        }
        const ordered = [...response.data].sort((a, b) => a.index - b.index);
        out.push(...ordered.map((d) => normalize(Float32Array.from(d.embedding))));
      }
      return out;
    },
  };
}
