import { extractAnswer } from "../knowledge/extract.js";
import type { ChatModel, ChatRequest, ChatResult } from "./types.js";

/**
 * The offline default: quotes the passage of the retrieved chunks that answers
 * the question (the answering sentence first, then what it introduces: a code
 * block or list after a colon, the rest of its paragraph), as Markdown, and
 * names its sources. A sentence counts only when it and its heading cover
 * enough of the question's weighted content words (or their related words from
 * the thesaurus); when none does, the model declines and the chatbot answers
 * with its fallback message. No model server needed.
 */
export function createExtractiveModel(): ChatModel {
  const answers = new WeakMap<ChatRequest, string | null>();
  const answerOf = (request: ChatRequest): string | null => {
    if (!answers.has(request)) answers.set(request, extractAnswer(request.question, request.context));
    return answers.get(request)!;
  };
  const text = (request: ChatRequest): string => {
    const answer = answerOf(request);
    // Only reached when the caller ignored declines(): still say something true.
    return answer ?? "I could not find this in the documents.";
  };

  return {
    spec: "extractive",
    declines: (request) => answerOf(request) === null,
    async chat(request: ChatRequest): Promise<ChatResult> {
      request.signal?.throwIfAborted();
      return { text: text(request), model: "extractive" };
    },
    async *stream(request: ChatRequest): AsyncIterable<string> {
      request.signal?.throwIfAborted();
      // Word-sized deltas, so clients see the same streaming shape as with a real model.
      for (const piece of text(request).match(/\S+\s*|\s+/g) ?? []) yield piece;
    },
  };
}

