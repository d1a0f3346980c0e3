import { ChatsvcError } from "../../core/errors.js";
import { normalize } from "./types.js";

export interface BatchTarget {
  /** The embedder's spec, for messages (`ollama:nomic-embed-text`). */
  spec: string;
  /** The server it calls, for messages. */
  server: string;
  /** Texts per call. */
  size: number;
}

/**
 * Embeds `texts` in calls of `size` through `request`, which answers one
 * vector per input (or anything else when the server's answer was not that).
 * Returns the vectors L2-normalised, in order. A failed call, or an answer
 * without exactly one vector per text, is the provider's failure: a 502
 * naming the embedder, so nothing half-embedded reaches the store.
 *
 * @example
 * await embedInBatches(texts, { spec: "ollama:m", server: host, size: 32 }, async (input) => (await client.embed({ model: "m", input })).embeddings);
 */
export async function embedInBatches(
  texts: string[],
  { spec, server, size }: BatchTarget,
  request: (input: string[]) => Promise<ArrayLike<number>[] | undefined>,
): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += size) {
    const input = texts.slice(i, i + size);
    let vectors: ArrayLike<number>[] | undefined;
    try {
      vectors = await request(input);
    } catch (error) {
      throw new ChatsvcError(502, `Embedding with ${spec} at ${server} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (!Array.isArray(vectors) || vectors.length !== input.length) {
      throw new ChatsvcError(502, `Embedding with ${spec} failed: expected ${input.length} embeddings, got ${Array.isArray(vectors) ? vectors.length : "none"}`);
    }
    out.push(...vectors.map((v) => normalize(Float32Array.from(v))));
  }
  return out;
}
