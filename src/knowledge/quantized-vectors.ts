import { createInt8Scan, SIMD_SCAN, TERM_BYTES } from "./int8-scan.js";

/**
 * Rows per block, also scored together: their sums stay in the L1 cache while
 * every query dimension is added. A multiple of 16, the rows the SIMD scan takes at once.
 */
const BLOCK = 2048;
const PAGE = 65536;
/** Relative slack on a candidate's error bound for float rounding (the row scale is a float32, sums are float64). */
const ROUNDING = 1e-6;

/** A candidate row: its approximate dot product with the query, and by how much at most the float one differs. */
export interface Candidate {
  id: number;
  score: number;
  error: number;
}

/**
 * One chatbot's vectors in memory for nearest-neighbour candidates: int8 with
 * a scale per vector (about dimension + 8 bytes per chunk), stored dimension
 * by dimension so a query only reads the dimensions where it is non-zero. The
 * hash embedder's query vectors are sparse (a short question touches a few
 * dozen of 384 buckets), which makes the scan some 10x cheaper than a float
 * scan of whole vectors; dense vectors still cost a quarter of the float bytes.
 * Rows live in fixed blocks of {@link BLOCK}, each dimension a run of the
 * block, in one WebAssembly memory that grows by whole blocks (V8 reserves a
 * memory's address space on 64-bit hosts, so growing does not copy).
 * The query is scaled to integers too, so a score is an exact integer sum
 * (the same whichever way it is added up) times the row's scale.
 * Scores are approximate (int8 rounding): callers re-score the candidates in
 * float, and each comes with how far at most it is from the float one.
 * `simd: false` runs the JavaScript scan (for runtimes without WebAssembly SIMD) where SIMD is available.
 *
 * @example
 * const index = createQuantizedVectors(384);
 * index.add(17, vector);
 * index.candidates(query, 64); // [{ id, score, error }], best first
 */
export function createQuantizedVectors(dimension: number, { simd = SIMD_SCAN } = {}) {
  const blocks: { base: number; ids: Int32Array; scales: Float32Array }[] = [];
  let size = 0;
  // The memory starts with the term table and the scan's output (an i32 sum per row of a block), then the blocks.
  const termBase = 0;
  const outBase = align16(Math.ceil(dimension / 2) * TERM_BYTES);
  const blockBase = outBase + BLOCK * 4;
  const blockBytes = dimension * BLOCK;
  const memory = new WebAssembly.Memory({ initial: Math.ceil(blockBase / PAGE) });
  let bytes = new Int8Array(memory.buffer);
  let words = new Int32Array(memory.buffer);
  const scan = createInt8Scan(memory, simd);

  return {
    dimension,
    get size() {
      return size;
    },

    /** Appends a vector (of this index's dimension) for a chunk. */
    add(id: number, vector: Float32Array): void {
      const row = size % BLOCK;
      if (row === 0) {
        const base = blockBase + blocks.length * blockBytes;
        const missing = base + blockBytes - memory.buffer.byteLength;
        if (missing > 0) {
          memory.grow(Math.ceil(missing / PAGE));
          bytes = new Int8Array(memory.buffer);
          words = new Int32Array(memory.buffer);
        }
        blocks.push({ base, ids: new Int32Array(BLOCK), scales: new Float32Array(BLOCK) });
      }
      const block = blocks[blocks.length - 1]!;
      let max = 0;
      for (let j = 0; j < dimension; j++) max = Math.max(max, Math.abs(vector[j]!));
      const inverse = max === 0 ? 0 : 127 / max;
      // Rounds to nearest as Math.round does, which V8 ran several times slower here: loading a large index was mostly that.
      for (let j = 0, at = block.base + row; j < dimension; j++, at += BLOCK) bytes[at] = Math.floor(vector[j]! * inverse + 0.5);
      block.ids[row] = id;
      block.scales[row] = max / 127;
      size++;
    },

    /**
     * The `count` vectors with the highest approximate dot product with
     * `query`, best first, each with the most its float dot product can differ.
     */
    candidates(query: Float32Array, count: number): Candidate[] {
      const { pairs, factor, rounding } = writeTerms(words, termBase, query);
      const heap = createTopHeap(Math.min(count, size));
      const out = outBase >> 2;
      const sums = words;
      // Most rows score below the heap's floor once it is full: they cost a compare, not a call.
      let floor = heap.floor();
      for (let b = 0; b < blocks.length; b++) {
        const { base, scales } = blocks[b]!;
        const n = Math.min(BLOCK, size - b * BLOCK);
        scan(base, align16(n), termBase, pairs, outBase);
        for (let i = 0; i < n; i++) {
          const score = sums[out + i]! * scales[i]!;
          if (score <= floor) continue;
          heap.offer(score, b * BLOCK + i);
          floor = heap.floor();
        }
      }
      // A row's sum is exact for its int8 values and the query's integer weights; each rounding
      // moves it by at most `rounding` of those units, which the row's scale over the query's factor turns into dot product units.
      const unit = factor === 0 ? 0 : 1 / factor;
      return heap.sorted().map(({ score, row }) => {
        const block = blocks[Math.floor(row / BLOCK)]!;
        const error = block.scales[row % BLOCK]! * rounding * unit;
        return { id: block.ids[row % BLOCK]!, score: score * unit, error: error + ROUNDING * (Math.abs(score * unit) + error) };
      });
    },
  };
}

/**
 * Writes the query's non-zero dimensions as the scan's term table at byte `at`
 * (pairs of run offsets and i16 weights; an odd last one paired with a zero
 * weight) and returns the number of pairs, the weights' factor over the query
 * and how far a row's sum can be from its exact value (in sum units) through
 * rounding the row to int8 and the query to integers. The weights are scaled so the
 * largest is as large as it can be without a row's sum leaving the i32 range.
 */
function writeTerms(words: Int32Array, at: number, query: Float32Array): { pairs: number; factor: number; rounding: number } {
  const dimensions: number[] = [];
  let max = 0;
  for (let j = 0; j < query.length; j++) {
    if (query[j] === 0) continue;
    dimensions.push(j);
    max = Math.max(max, Math.abs(query[j]!));
  }
  const largest = Math.min(32767, Math.floor(0x7fffffff / (128 * Math.max(1, dimensions.length))));
  const factor = max === 0 ? 0 : largest / max;
  const weight = (k: number) => (k < dimensions.length ? Math.round(query[dimensions[k]!]! * factor) : 0);
  const pairs = Math.ceil(dimensions.length / 2);
  for (let p = 0, w = at >> 2; p < pairs; p++, w += TERM_BYTES / 4) {
    words[w] = dimensions[2 * p]! * BLOCK;
    words[w + 1] = (dimensions[2 * p + 1] ?? 0) * BLOCK;
    words[w + 2] = (weight(2 * p) & 0xffff) | (weight(2 * p + 1) << 16);
  }
  // Per dimension: a row value rounded by up to half a step against its weight, the weight by up to half against up to 127 steps, and both.
  let weights = 0;
  for (let k = 0; k < dimensions.length; k++) weights += Math.abs(weight(k));
  return { pairs, factor, rounding: 0.5 * weights + (0.5 * 127 + 0.25) * dimensions.length };
}

function align16(n: number): number {
  return (n + 15) & ~15;
}

export type QuantizedVectors = ReturnType<typeof createQuantizedVectors>;

// A bounded min-heap of (score, row): keeps the best `capacity` offered.
function createTopHeap(capacity: number) {
  const scores = new Float64Array(capacity);
  const rows = new Int32Array(capacity);
  let length = 0;

  const siftDown = (from: number) => {
    let i = from;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < length && scores[left]! < scores[smallest]!) smallest = left;
      if (right < length && scores[right]! < scores[smallest]!) smallest = right;
      if (smallest === i) return;
      swap(i, smallest);
      i = smallest;
    }
  };
  const swap = (a: number, b: number) => {
    const s = scores[a]!;
    scores[a] = scores[b]!;
    scores[b] = s;
    const t = rows[a]!;
    rows[a] = rows[b]!;
    rows[b] = t;
  };

  return {
    offer(score: number, row: number): void {
      if (length < capacity) {
        let i = length++;
        scores[i] = score;
        rows[i] = row;
        while (i > 0) {
          const parent = (i - 1) >> 1;
          if (scores[parent]! <= scores[i]!) break;
          swap(i, parent);
          i = parent;
        }
      } else if (capacity > 0 && score > scores[0]!) {
        scores[0] = score;
        rows[0] = row;
        siftDown(0);
      }
    },
    /** The score an offer must beat to be kept. */
    floor(): number {
      return capacity === 0 ? Infinity : length < capacity ? -Infinity : scores[0]!;
    },
    sorted(): { score: number; row: number }[] {
      const order = Array.from({ length }, (_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
      return order.map((i) => ({ score: scores[i]!, row: rows[i]! }));
    },
  };
}
