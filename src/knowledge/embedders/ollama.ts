import type { Ollama } from "ollama";
import { embedInBatches } from "./batches.js";
import type { Embedder } from "./types.js";

const BATCH = 32;

/**
 * Embeddings from an Ollama server (`ollama:<model>`), sent in batches.
 *
 * @example
 * const embedder = createOllamaEmbedder("nomic-embed-text", { host: "http://127.0.0.1:11434" });
 */
export function createOllamaEmbedder(model: string, { host, timeoutMs = 60_000 }: { host: string; timeoutMs?: number }): Embedder {
  // Loaded on the first batch, so that building the embedder (or a service that never embeds) does not load the client.
  let client: Promise<Ollama> | undefined;
  const connect = async () => {
    const { Ollama } = await import("ollama");
    return new Ollama({ host, fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) }) });
  };
  const spec = `ollama:${model}`;
  return {
    spec,
    dimension: undefined,
    embed: (texts) =>
      embedInBatches(texts, { spec, server: host, size: BATCH }, async (input) => (await (await (client ??= connect())).embed({ model, input })).embeddings),
  };
}
