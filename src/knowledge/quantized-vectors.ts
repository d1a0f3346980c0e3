/**
 * Rows per block, also scored together: their accumulators stay in the L1 cache
 * while every query dimension is added.
 */
const BLOCK = 2048;

/**
 * One chatbot's vectors in memory for nearest-neighbour candidates: int8 with
 * a scale per vector (about dimension + 8 bytes per chunk), stored dimension
 * by dimension so a query only reads the dimensions where it is non-zero. The
 * hash embedder's query vectors are sparse (a short question touches a few
 * dozen of 384 buckets), which makes the scan some 10x cheaper than a float
 * scan of whole vectors; dense vectors still cost a quarter of the float bytes.
 * Rows live in fixed blocks of {@link BLOCK}, each dimension a run of the
 * block, so growing adds a block and never copies (a doubled array would leave
 * the old one behind as garbage and up to half of the new one unused).
 * Scores are approximate (int8 rounding): callers re-score the candidates in float.
 *
 * @example
 * const index = createQuantizedVectors(384);
 * index.add(17, vector);
 * index.candidates(query, 64); // chunk ids, best first
 */
export function createQuantizedVectors(dimension: number) {
  const blocks: { values: Int8Array; ids: Int32Array; scales: Float32Array }[] = [];
  let size = 0;
  const accumulator = new Float64Array(BLOCK);

  return {
    dimension,
    get size() {
      return size;
    },

    /** Appends a vector (of this index's dimension) for a chunk. */
    add(id: number, vector: Float32Array): void {
      const row = size % BLOCK;
      if (row === 0) blocks.push({ values: new Int8Array(dimension * BLOCK), ids: new Int32Array(BLOCK), scales: new Float32Array(BLOCK) });
      const block = blocks[blocks.length - 1]!;
      let max = 0;
      for (let j = 0; j < dimension; j++) max = Math.max(max, Math.abs(vector[j]!));
      const inverse = max === 0 ? 0 : 127 / max;
      const values = block.values;
      for (let j = 0, at = row; j < dimension; j++, at += BLOCK) values[at] = Math.round(vector[j]! * inverse);
      block.ids[row] = id;
      block.scales[row] = max / 127;
      size++;
    },

    /** Ids of the `count` vectors with the highest approximate dot product with `query`, best first. */
    candidates(query: Float32Array, count: number): number[] {
      // The query's non-zero dimensions (as offsets of their runs in a block), padded with zero weights
      // to a multiple of 8: adding eight runs per pass cuts the accumulator traffic, the bulk of the cost.
      const weights: number[] = [];
      const offsets: number[] = [];
      for (let j = 0; j < dimension; j++) {
        if (query[j] === 0) continue;
        weights.push(query[j]!);
        offsets.push(j * BLOCK);
      }
      while (weights.length % 8 !== 0) {
        weights.push(0);
        offsets.push(0);
      }
      const heap = createTopHeap(Math.min(count, size));
      blocks.forEach(({ values, ids, scales }, b) => {
        const n = Math.min(BLOCK, size - b * BLOCK);
        accumulator.fill(0, 0, n);
        for (let d = 0; d < weights.length; d += 8) {
          const [w0, w1, w2, w3, w4, w5, w6, w7] = weights.slice(d, d + 8) as [number, number, number, number, number, number, number, number];
          const [o0, o1, o2, o3, o4, o5, o6, o7] = offsets.slice(d, d + 8) as [number, number, number, number, number, number, number, number];
          for (let i = 0; i < n; i++) {
            accumulator[i]! +=
              w0 * values[o0 + i]! + w1 * values[o1 + i]! + w2 * values[o2 + i]! + w3 * values[o3 + i]! + w4 * values[o4 + i]! + w5 * values[o5 + i]! + w6 * values[o6 + i]! + w7 * values[o7 + i]!;
          }
        }
        for (let i = 0; i < n; i++) heap.offer(accumulator[i]! * scales[i]!, ids[i]!);
      });
      return heap.sorted();
    },
  };
}

export type QuantizedVectors = ReturnType<typeof createQuantizedVectors>;

// A bounded min-heap of (score, id): keeps the best `capacity` offered.
function createTopHeap(capacity: number) {
  const scores = new Float64Array(capacity);
  const ids = new Int32Array(capacity);
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
    const t = ids[a]!;
    ids[a] = ids[b]!;
    ids[b] = t;
  };

  return {
    offer(score: number, id: number): void {
      if (length < capacity) {
        let i = length++;
        scores[i] = score;
        ids[i] = id;
        while (i > 0) {
          const parent = (i - 1) >> 1;
          if (scores[parent]! <= scores[i]!) break;
          swap(i, parent);
          i = parent;
        }
      } else if (capacity > 0 && score > scores[0]!) {
        scores[0] = score;
        ids[0] = id;
        siftDown(0);
      }
    },
    sorted(): number[] {
      const order = Array.from({ length }, (_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
      return order.map((i) => ids[i]!);
    },
  };
}
