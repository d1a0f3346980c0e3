import type { ChatModel, ChatRequest, ChatResult } from "./types.js";

const STOP = new Set(
  "a an and are as at be but by can do does for from has have how i in is it its me my of on or so that the their then there these this to was what when where which who why will with you your".split(" "),
);

const terms = (s: string) =>
  s
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 1 && !STOP.has(t));

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n{2,}|\n(?=\s*[-*#\d])/)
    .map((s) => s.replace(/\s+/g, " ").trim())
    .filter((s) => s.length > 0);
}

/**
 * The offline default: answers with the sentences of the retrieved chunks that
 * share the most terms with the question, in document order, as Markdown, and
 * names the sources it drew from. No model server needed.
 */
export function createExtractiveModel({ maxSentences = 4 }: { maxSentences?: number } = {}): ChatModel {
  const answer = (request: ChatRequest): string => {
    const wanted = new Set(terms(request.question));
    const scored: { text: string; score: number; order: number; source: string }[] = [];
    request.context.forEach((chunk, rank) => {
      sentences(chunk.content).forEach((sentence, i) => {
        const words = terms(sentence);
        const overlap = new Set(words.filter((w) => wanted.has(w))).size;
        if (overlap === 0) return;
        // Earlier (more relevant) chunks and denser sentences win ties.
        scored.push({ text: sentence, score: overlap / Math.sqrt(words.length + 1) + 1 / (rank + 2), order: rank * 10_000 + i, source: chunk.name });
      });
    });
    if (scored.length === 0) {
      const first = request.context[0];
      return first ? sentences(first.content).slice(0, 2).join(" ") : "";
    }
    const best = scored.sort((a, b) => b.score - a.score).slice(0, maxSentences).sort((a, b) => a.order - b.order);
    const seen = new Set<string>();
    const lines = best.filter((s) => !seen.has(s.text) && seen.add(s.text)).map((s) => s.text.replace(/^[-*]\s+/, ""));
    const sources = [...new Set(best.map((s) => s.source))];
    return `${lines.join("\n\n")}\n\n*Source: ${sources.join(", ")}*`;
  };

  return {
    spec: "extractive",
    async chat(request: ChatRequest): Promise<ChatResult> {
      request.signal?.throwIfAborted();
      return { text: answer(request), model: "extractive" };
    },
    async *stream(request: ChatRequest): AsyncIterable<string> {
      request.signal?.throwIfAborted();
      // Word-sized deltas, so clients see the same streaming shape as with a real model.
      for (const piece of answer(request).match(/\S+\s*|\s+/g) ?? []) yield piece;
    },
  };
}
