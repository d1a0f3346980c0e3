import { contentTerms } from "../text/tokens.js";
import { normalize, type Embedder } from "./types.js";

/** Dimension of the offline embedder's vectors. */
export const HASH_DIMENSION = 384;

// Relative weight of each feature kind: whole words carry the meaning, bigrams
// reward phrases, character n-grams catch inflections and typos without dominating.
const UNIGRAM = 1;
const BIGRAM = 0.8;
const TRIGRAM = 0.15;
/** Texts embedded between two turns of the event loop. */
const YIELD_EVERY = 64;

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
    async embed(texts) {
      const vectors: Float32Array[] = [];
      for (const text of texts) {
        // Ingestion embeds hundreds of chunks per call: other work (requests) gets its turn in between.
        if (vectors.length > 0 && vectors.length % YIELD_EVERY === 0) await new Promise(setImmediate);
        vectors.push(hashEmbed(text, dimension));
      }
      return vectors;
    },
  };
}

/** The hash embedding of one text (synchronous; exported for benchmarks). */
export function hashEmbed(text: string, dimension = HASH_DIMENSION): Float32Array {
  features.clear();
  const terms = contentTerms(text);
  let previous = -1;
  for (const term of terms) {
    const h = fnv1a(term, 0x811c9dc5);
    features.add(h, UNIGRAM);
    if (previous !== -1) features.add(Math.imul(previous ^ 0x9e3779b9, 31) ^ h, BIGRAM);
    previous = h;
    const padded = ` ${term} `;
    for (let i = 0; i + 3 <= padded.length; i++) features.add(fnv1aRange(padded, i, i + 3, 0x01000193), TRIGRAM);
  }
  const vector = new Float32Array(dimension);
  // In the order features were first seen: float32 sums depend on the order of their terms.
  for (let n = 0; n < features.size; n++) {
    const slot = features.order[n]!;
    const h = features.keys[slot]!;
    const w = features.weights[slot]!;
    const bucket = (h >>> 1) % dimension;
    vector[bucket]! += h & 1 ? Math.sqrt(w) : -Math.sqrt(w);
  }
  return normalize(vector);
}

/**
 * Summed weight per feature hash, reused by every embedding (they run one at a
 * time): open addressing over typed arrays, because a Map keyed by 32-bit
 * hashes boxes most of them (those outside V8's small-integer range), which
 * was most of the embedding time.
 */
const features = {
  // Unigram and trigram hashes are unsigned, bigram ones signed: a negative one is a feature of its own.
  keys: new Float64Array(4096),
  weights: new Float64Array(4096),
  used: new Uint8Array(4096),
  /** Slots in the order their feature was first added. */
  order: new Int32Array(2048),
  size: 0,

  clear(): void {
    for (let n = 0; n < this.size; n++) this.used[this.order[n]!] = 0;
    this.size = 0;
  },

  add(h: number, w: number): void {
    const mask = this.keys.length - 1;
    let slot = (h ^ (h >>> 15)) & mask;
    while (this.used[slot] === 1) {
      if (this.keys[slot] === h) {
        this.weights[slot]! += w;
        return;
      }
      slot = (slot + 1) & mask;
    }
    this.used[slot] = 1;
    this.keys[slot] = h;
    this.weights[slot] = w;
    this.order[this.size++] = slot;
    // At most half full, so probes stay short.
    if (this.size === this.order.length) this.grow();
  },

  grow(): void {
    const { keys, weights, order, size } = this;
    this.keys = new Float64Array(keys.length * 2);
    this.weights = new Float64Array(keys.length * 2);
    this.used = new Uint8Array(keys.length * 2);
    this.order = new Int32Array(order.length * 2);
    this.size = 0;
    for (let n = 0; n < size; n++) this.add(keys[order[n]!]!, weights[order[n]!]!);
  },
};

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
