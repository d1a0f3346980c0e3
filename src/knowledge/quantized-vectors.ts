/** Rows scored together: their accumulators stay in the L1 cache while every query dimension is added. */
const BLOCK = 2048;

/**
 * One chatbot's vectors in memory for nearest-neighbour candidates: int8 with
 * a scale per vector (about dimension + 8 bytes per chunk), stored dimension
 * by dimension so a query only reads the dimensions where it is non-zero. The
 * hash embedder's query vectors are sparse (a short question touches a few
 * dozen of 384 buckets), which makes the scan some 10x cheaper than a float
 * scan of whole vectors; dense vectors still cost a quarter of the float bytes.
 * Scores are approximate (int8 rounding): callers re-score the candidates in float.
 *
 * @example
 * const index = createQuantizedVectors(384);
 * index.add(17, vector);
 * index.candidates(query, 64); // chunk ids, best first
 */
export function createQuantizedVectors(dimension: number) {
  let capacity = 1024;
  let size = 0;
  let columns = Array.from({ length: dimension }, () => new Int8Array(capacity));
  let ids = new Int32Array(capacity);
  let scales = new Float32Array(capacity);
  const accumulator = new Float64Array(BLOCK);

  const grow = () => {
    capacity *= 2;
    columns = columns.map((old) => {
      const next = new Int8Array(capacity);
      next.set(old);
      return next;
    });
    const nextIds = new Int32Array(capacity);
    nextIds.set(ids);
    ids = nextIds;
    const nextScales = new Float32Array(capacity);
    nextScales.set(scales);
    scales = nextScales;
  };

  return {
    dimension,
    get size() {
      return size;
    },

    /** Appends a vector (of this index's dimension) for a chunk. */
    add(id: number, vector: Float32Array): void {
      if (size === capacity) grow();
      let max = 0;
      for (let j = 0; j < dimension; j++) max = Math.max(max, Math.abs(vector[j]!));
      const scale = max / 127;
      const inverse = max === 0 ? 0 : 127 / max;
      for (let j = 0; j < dimension; j++) columns[j]![size] = Math.round(vector[j]! * inverse);
      ids[size] = id;
      scales[size] = scale;
      size++;
    },

    /** Ids of the `count` vectors with the highest approximate dot product with `query`, best first. */
    candidates(query: Float32Array, count: number): number[] {
      // The query's non-zero dimensions, padded with zero weights to a multiple of 4:
      // adding four columns per pass halves the accumulator traffic, the bulk of the cost.
      const weights: number[] = [];
      const used: Int8Array[] = [];
      for (let j = 0; j < dimension; j++) {
        if (query[j] === 0) continue;
        weights.push(query[j]!);
        used.push(columns[j]!);
      }
      while (weights.length % 4 !== 0) {
        weights.push(0);
        used.push(columns[0]!);
      }
      const heap = createTopHeap(Math.min(count, size));
      for (let start = 0; start < size; start += BLOCK) {
        const n = Math.min(size, start + BLOCK) - start;
        accumulator.fill(0, 0, n);
        for (let d = 0; d < weights.length; d += 4) {
          const [w0, w1, w2, w3] = [weights[d]!, weights[d + 1]!, weights[d + 2]!, weights[d + 3]!];
          const [c0, c1, c2, c3] = [used[d]!, used[d + 1]!, used[d + 2]!, used[d + 3]!];
          for (let i = 0, row = start; i < n; i++, row++) accumulator[i]! += w0 * c0[row]! + w1 * c1[row]! + w2 * c2[row]! + w3 * c3[row]!;
        }
        for (let i = 0; i < n; i++) heap.offer(accumulator[i]! * scales[start + i]!, start + i);
      }
      return heap.sorted().map((slot) => ids[slot]!);
    },
  };
}

export type QuantizedVectors = ReturnType<typeof createQuantizedVectors>;

// A bounded min-heap of (score, slot): keeps the best `capacity` offered.
function createTopHeap(capacity: number) {
  const scores = new Float64Array(capacity);
  const slots = new Int32Array(capacity);
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
    const t = slots[a]!;
    slots[a] = slots[b]!;
    slots[b] = t;
  };

  return {
    offer(score: number, slot: number): void {
      if (length < capacity) {
        let i = length++;
        scores[i] = score;
        slots[i] = slot;
        while (i > 0) {
          const parent = (i - 1) >> 1;
          if (scores[parent]! <= scores[i]!) break;
          swap(i, parent);
          i = parent;
        }
      } else if (capacity > 0 && score > scores[0]!) {
        scores[0] = score;
        slots[0] = slot;
        siftDown(0);
      }
    },
    sorted(): number[] {
      const order = Array.from({ length }, (_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
      return order.map((i) => slots[i]!);
    },
  };
}
