import type { RetrievedChunk } from "../knowledge/types.js";

export interface PromptMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** One model call: the built prompt, plus the raw parts for models that work on them (extractive). */
export interface ChatRequest {
  messages: PromptMessage[];
  /** The visitor's message this call answers. */
  question: string;
  /** Retrieved knowledge, best first. */
  context: RetrievedChunk[];
  signal?: AbortSignal;
}

export interface ChatResult {
  /** Markdown reply. */
  text: string;
  /** Model spec that answered, e.g. `ollama:llama3.2`. */
  model: string;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/** A chat provider. A new provider is one file implementing this. */
export interface ChatModel {
  readonly spec: string;
  chat(request: ChatRequest): Promise<ChatResult>;
  /** Text deltas as the model produces them; the concatenation is the reply. */
  stream(request: ChatRequest): AsyncIterable<string>;
  /**
   * True when the model can tell before answering that the context does not
   * answer the question (the extractive model): the chatbot then answers with
   * its fallback message and `cannot_answer`, as when retrieval finds nothing.
   */
  declines?(request: ChatRequest): boolean;
}
