import { contentTerms } from "../text/tokens.js";
import { normalize, type Embedder } from "./types.js";

/** Dimension of the offline embedder's vectors. */
export const HASH_DIMENSION = 384;

// Relative weight of each feature kind: whole words carry the meaning, bigrams
// reward phrases, character n-grams catch inflections and typos without dominating.
const UNIGRAM = 1;
const BIGRAM = 0.8;
const TRIGRAM = 0.15;

/**
 * The offline default: feature hashing of stemmed word unigrams, bigrams and
 * character trigrams into a fixed dimension, signed to cancel collisions, with
 * square-root term-frequency damping, L2-normalised. Needs no model and no network.
 *
 * @example
 * const [v] = await createHashEmbedder().embed(["How do I create an API key?"]);
 */
export function createHashEmbedder(dimension = HASH_DIMENSION): Embedder {
  return {
    spec: "hash",
    dimension,
    embed: async (texts) => texts.map((t) => hashEmbed(t, dimension)),
  };
}

/** The hash embedding of one text (synchronous; exported for benchmarks). */
export function hashEmbed(text: string, dimension = HASH_DIMENSION): Float32Array {
  const weights = new Map<number, number>();
  const add = (h: number, w: number) => weights.set(h, (weights.get(h) ?? 0) + w);
  const terms = contentTerms(text);
  let previous = -1;
  for (const term of terms) {
    const h = fnv1a(term, 0x811c9dc5);
    add(h, UNIGRAM);
    if (previous !== -1) add(Math.imul(previous ^ 0x9e3779b9, 31) ^ h, BIGRAM);
    previous = h;
    const padded = ` ${term} `;
    for (let i = 0; i + 3 <= padded.length; i++) add(fnv1aRange(padded, i, i + 3, 0x01000193), TRIGRAM);
  }
  const vector = new Float32Array(dimension);
  for (const [h, w] of weights) {
    const bucket = (h >>> 1) % dimension;
    vector[bucket]! += h & 1 ? Math.sqrt(w) : -Math.sqrt(w);
  }
  return normalize(vector);
}

function fnv1a(s: string, seed: number): number {
  return fnv1aRange(s, 0, s.length, seed);
}

function fnv1aRange(s: string, start: number, end: number, seed: number): number {
  let h = seed >>> 0;
  for (let i = start; i < end; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // Final avalanche so nearby inputs spread over buckets and sign bits.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}
