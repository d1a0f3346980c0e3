import { createHash } from "node:crypto";

/** A document's identity by content: equal text, equal hash. */
export function contentHash(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** What gets embedded for a chunk: the heading path gives short chunks their context. */
export function embeddingText(chunk: { heading: string; content: string }): string {
  return chunk.heading ? `${chunk.heading}\n${chunk.content}` : chunk.content;
}
