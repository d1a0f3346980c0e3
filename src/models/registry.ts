import type { ResolvedConfig } from "../config.js";
import { ChatsvcError } from "../core/errors.js";
import { createExtractiveModel } from "./extractive.js";
import type { ChatModel } from "./types.js";

/** Chat models by spec, created on first use and reused. */
export interface Models {
  /** The model for a spec (`extractive`, `ollama:<m>`, `openai:<m>`). */
  get(spec: string): ChatModel;
}

export function createModels(config: ResolvedConfig): Models {
  const cache = new Map<string, ChatModel>();
  const build = (spec: string): ChatModel => {
    if (spec === "extractive") return createExtractiveModel();
    throw new ChatsvcError(500, `Unknown model "${spec}"`);
  };
  void config;
  return {
    get(spec) {
      let model = cache.get(spec);
      if (!model) cache.set(spec, (model = build(spec)));
      return model;
    },
  };
}
