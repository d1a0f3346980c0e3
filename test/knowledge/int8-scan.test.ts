import { describe, expect, it } from "vitest";
import { createInt8Scan, SIMD_SCAN, TERM_BYTES } from "../../src/knowledge/int8-scan.js";
import { createQuantizedVectors } from "../../src/knowledge/quantized-vectors.js";

// A seeded pseudo-random generator, so a failure can be reproduced.
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
const BLOCK = 2048;

describe("int8 scan", () => {
  it("runs as WebAssembly SIMD on this Node", () => {
    expect(SIMD_SCAN).toBe(true);
  });

  it("gives each row's exact integer dot product, in WebAssembly and in JavaScript alike", () => {
    const next = random(7);
    for (const dimension of [1, 5, 17, 33]) {
      for (const rows of [16, 48, BLOCK]) {
        const memory = new WebAssembly.Memory({ initial: Math.ceil((4096 + BLOCK * 4 + dimension * BLOCK) / 65536) });
        const bytes = new Int8Array(memory.buffer);
        const words = new Int32Array(memory.buffer);
        const [terms, out, block] = [0, 4096, 4096 + BLOCK * 4];
        // Every int8 value, the extremes -128 and 127 included, and runs of them.
        for (let i = 0; i < dimension * BLOCK; i++) bytes[block + i] = i % 97 === 0 ? -128 : i % 89 === 0 ? 127 : Math.floor(next() * 256) - 128;
        const pairs = Math.ceil(dimension / 2);
        const weights: [number, number, number, number][] = [];
        for (let p = 0; p < pairs; p++) {
          const a = 2 * p;
          const b = Math.min(2 * p + 1, dimension - 1);
          const weight = () => (p === 0 ? -32768 : Math.floor(next() * 65536) - 32768);
          const [wa, wb] = [weight(), p === 0 ? 32767 : weight()];
          weights.push([a * BLOCK, b * BLOCK, wa, wb]);
          words.set([a * BLOCK, b * BLOCK, (wa & 0xffff) | (wb << 16)], (terms + p * TERM_BYTES) >> 2);
        }
        const expected = Array.from({ length: rows }, (_, r) => weights.reduce((sum, [a, b, wa, wb]) => (sum + wa * bytes[block + a + r]! + wb * bytes[block + b + r]!) | 0, 0));
        for (const simd of [true, false]) {
          words.fill(-1, out >> 2, (out >> 2) + BLOCK);
          createInt8Scan(memory, simd)(block, rows, terms, pairs, out);
          expect(Array.from(words.subarray(out >> 2, (out >> 2) + rows)), `dimension ${dimension}, ${rows} rows, simd ${simd}`).toEqual(expected);
        }
      }
    }
  });
});

describe("quantized vectors", () => {
  /** The documented int8 form of a row: 127 is the row's largest magnitude; the scale turns a sum back into the row's units. */
  function referenceRow(row: Float32Array): { int8: number[]; scale: number } {
    const rowMax = Math.max(...row.map(Math.abs));
    const inverse = rowMax === 0 ? 0 : 127 / rowMax;
    return { int8: Array.from(row, (v) => Math.round(v * inverse)), scale: Math.fround(rowMax / 127) };
  }

  /** The documented scoring, row by row: int8 rows (see referenceRow), the query's weights scaled to integers. */
  function referenceScores(rows: { int8: number[]; scale: number }[], query: Float32Array): number[] {
    const nonZero = [...query].filter((q) => q !== 0);
    const max = Math.max(0, ...nonZero.map(Math.abs));
    const largest = Math.min(32767, Math.floor(0x7fffffff / (128 * Math.max(1, nonZero.length))));
    const weights = [...query].map((q) => (max === 0 ? 0 : Math.round(q * (largest / max))));
    return rows.map(({ int8, scale }) => {
      let sum = 0;
      for (let j = 0; j < int8.length; j++) sum += weights[j]! * int8[j]!;
      return sum * scale;
    });
  }

  const dotProduct = (a: Float32Array, b: Float32Array) => {
    let sum = 0;
    for (let j = 0; j < a.length; j++) sum += a[j]! * b[j]!;
    return sum;
  };

  it("ranks like a straightforward scan, in WebAssembly and in JavaScript alike, within its error bound of the float dot product", () => {
    const next = random(11);
    for (const dimension of [5, 17, 100, 384]) {
      const count = 2 * BLOCK + 37;
      const rows: Float32Array[] = [];
      for (let i = 0; i < count; i++) {
        // Some rows repeat an earlier one (equal scores), some are all zero, the rest mixed signs, some sparse.
        if (i % 501 === 500) rows.push(rows[i - 250]!);
        else if (i % 777 === 0) rows.push(new Float32Array(dimension));
        else rows.push(Float32Array.from({ length: dimension }, () => (i % 3 === 0 && next() < 0.8 ? 0 : next() * 2 - 1)));
      }
      const fast = createQuantizedVectors(dimension);
      const plain = createQuantizedVectors(dimension, { simd: false });
      rows.forEach((row, i) => {
        fast.add(1000 + i, row);
        plain.add(1000 + i, row);
      });
      const queries = [
        Float32Array.from({ length: dimension }, () => next() * 2 - 1),
        Float32Array.from({ length: dimension }, () => (next() < 0.1 ? next() - 0.7 : 0)),
        Float32Array.from({ length: dimension }, (_, j) => (j === dimension - 1 ? -0.5 : 0)),
        new Float32Array(dimension),
      ];
      const quantized = rows.map(referenceRow);
      for (const [q, query] of queries.entries()) {
        const scores = referenceScores(quantized, query);
        const sorted = [...scores].sort((a, b) => b - a);
        for (const k of [1, 64, count + 5]) {
          const got = fast.candidates(query, k);
          // As flat [id, score, error] lists: a deep comparison of thousands of objects was most of the test's time.
          const flat = (candidates: typeof got) => candidates.flatMap((c) => [c.id, c.score, c.error]);
          expect(flat(plain.candidates(query, k)), `dimension ${dimension}, query ${q}, k ${k}`).toEqual(flat(got));
          const best = sorted.slice(0, k);
          // Equal scores may come in either order: the scores, in order, are what must agree.
          expect(got.map((c) => scores[c.id - 1000]), `dimension ${dimension}, query ${q}, k ${k}`).toEqual(best);
          // Callers skip re-scoring a candidate by its bounds: the float dot product must lie within them.
          // Gathered and compared once: an assertion per row was thousands per query.
          const outside = got.flatMap((c) => {
            const off = Math.abs(dotProduct(rows[c.id - 1000]!, query) - c.score);
            return off <= c.error ? [] : [{ row: c.id, off, error: c.error }];
          });
          expect(outside, `dimension ${dimension}, query ${q}, k ${k}: rows whose float dot product lies outside their bound`).toEqual([]);
        }
      }
    }
  });
});
