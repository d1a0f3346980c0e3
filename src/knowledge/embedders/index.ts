import type { ResolvedConfig } from "../../core/config.js";
import { ChatsvcError } from "../../core/errors.js";
import { createHashEmbedder } from "./hash.js";
import { createOllamaEmbedder } from "./ollama.js";
import { createOpenAIEmbedder } from "./openai.js";
import type { Embedder } from "./types.js";

export { dot, normalize, type Embedder } from "./types.js";

/**
 * The embedder a spec names: `hash`, `ollama:<model>` or `openai:<model>`.
 *
 * @example
 * const embedder = createEmbedder("hash", config);
 */
export function createEmbedder(spec: string, config: Pick<ResolvedConfig, "ollamaHost" | "openaiBaseUrl" | "openaiApiKey" | "modelTimeoutMs">): Embedder {
  if (spec === "hash") return createHashEmbedder();
  const [provider, ...rest] = spec.split(":");
  const model = rest.join(":");
  if (provider === "ollama" && model) return createOllamaEmbedder(model, { host: config.ollamaHost, timeoutMs: config.modelTimeoutMs });
  if (provider === "openai" && model) {
    return createOpenAIEmbedder(model, { baseUrl: config.openaiBaseUrl, apiKey: config.openaiApiKey, timeoutMs: config.modelTimeoutMs });
  }
  throw new ChatsvcError(422, `Unknown embedder "${spec}": use hash, ollama:<model> or openai:<model>`);
}
