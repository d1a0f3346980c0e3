import { Ollama } from "ollama";
import { ChatsvcError } from "../../core/errors.js";
import { normalize, type Embedder } from "./types.js";

const BATCH = 32;

/**
 * Embeddings from an Ollama server (`ollama:<model>`), sent in batches.
 *
 * @example
 * const embedder = createOllamaEmbedder("nomic-embed-text", { host: "http://127.0.0.1:11434" });
 */
export function createOllamaEmbedder(model: string, { host, timeoutMs = 60_000 }: { host: string; timeoutMs?: number }): Embedder {
  const client = new Ollama({ host, fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) }) });
  const spec = `ollama:${model}`;
  return {
    spec,
    dimension: undefined,
    async embed(texts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += BATCH) {
        let embeddings: number[][];
        try {
          ({ embeddings } = await client.embed({ model, input: texts.slice(i, i + BATCH) }));
        } catch (error) {
          throw new ChatsvcError(502, `Embedding with ${spec} at ${host} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        }
        out.push(...embeddings.map((e) => normalize(Float32Array.from(e))));
      }
      return out;
    },
  };
}
