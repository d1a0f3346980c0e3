import type { ResolvedConfig } from "../core/config.js";
import { ChatsvcError } from "../core/errors.js";
import { createExtractiveModel } from "./extractive.js";
import { createOllamaModel } from "./ollama.js";
import { createOpenAIModel } from "./openai.js";
import type { ChatModel } from "./types.js";

/** Chat models by spec, created on first use and reused. */
export interface Models {
  /** The model for a spec (`extractive`, `ollama:<m>`, `openai:<m>`); throws for an unknown spec. */
  get(spec: string): ChatModel;
  /**
   * False for a model that answers from the question and the retrieved context
   * alone (`extractive`): a turn for it need not read the conversation's history.
   * True for any other spec, an unknown one included (its failure comes later, as before).
   */
  readsHistory(spec: string): boolean;
  /** True for a model whose answer is `extractAnswer` over the retrieved chunks (`extractive`): the search may work it out with them. */
  extractsAnswer(spec: string): boolean;
}

/** A model spec taken apart: the provider and, for servers, the model name there. */
export type ModelSpec = { provider: "extractive" } | { provider: "ollama" | "openai"; model: string };

/**
 * Parses a model spec. The model name is everything after the first colon, so
 * Ollama tags such as `ollama:llama3.2:1b` keep theirs.
 *
 * @example
 * parseModelSpec("ollama:llama3.2:1b"); // { provider: "ollama", model: "llama3.2:1b" }
 * parseModelSpec("gpt-4o");             // undefined
 */
export function parseModelSpec(spec: string): ModelSpec | undefined {
  if (spec === "extractive") return { provider: "extractive" };
  const match = /^(ollama|openai):(\S+)$/.exec(spec);
  return match ? { provider: match[1] as "ollama" | "openai", model: match[2]! } : undefined;
}

/**
 * The service's chat models: `ollama:<m>` talks to `config.ollamaHost`,
 * `openai:<m>` to `config.openaiBaseUrl` with `config.openaiApiKey`; every call
 * times out after `config.modelTimeoutMs`.
 *
 * @example
 * const models = createModels(resolveConfig({ chatModel: "ollama:llama3.2" }));
 * const reply = await models.get("ollama:llama3.2").chat({ messages, question, context });
 */
export function createModels(config: ResolvedConfig): Models {
  const cache = new Map<string, ChatModel>();
  const build = (spec: string): ChatModel => {
    const parsed = parseModelSpec(spec);
    if (!parsed) {
      throw new ChatsvcError(500, `Unknown chat model "${spec}": use extractive, ollama:<model> or openai:<model>`);
    }
    switch (parsed.provider) {
      case "extractive":
        return createExtractiveModel();
      case "ollama":
        return createOllamaModel({ model: parsed.model, host: config.ollamaHost, timeoutMs: config.modelTimeoutMs });
      case "openai":
        return createOpenAIModel({ model: parsed.model, baseUrl: config.openaiBaseUrl, apiKey: config.openaiApiKey, timeoutMs: config.modelTimeoutMs });
    }
  };
  return {
    get(spec) {
      let model = cache.get(spec);
      if (!model) cache.set(spec, (model = build(spec)));
      return model;
    },
    readsHistory: (spec) => parseModelSpec(spec)?.provider !== "extractive",
    extractsAnswer: (spec) => parseModelSpec(spec)?.provider === "extractive",
  };
}
