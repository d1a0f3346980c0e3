/** Turns texts into unit-length vectors. A new embedder is one file implementing this. */
export interface Embedder {
  /** The spec it was created from, e.g. `hash` or `ollama:nomic-embed-text`; recorded per database. */
  readonly spec: string;
  /** Vector length when known before the first call (the hash embedder); otherwise learnt from the first answer. */
  readonly dimension: number | undefined;
  /** One L2-normalised vector per text, in order. */
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** Scales a vector to unit length in place (a zero vector stays zero). */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  if (sum > 0) {
    const inv = 1 / Math.sqrt(sum);
    for (let i = 0; i < vector.length; i++) vector[i]! *= inv;
  }
  return vector;
}

/** Dot product; the cosine similarity of unit vectors. */
export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) sum += a[i]! * b[i]!;
  return sum;
}
