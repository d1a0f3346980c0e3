import { INT8_SCAN_WASM } from "./int8-scan-wasm.js";

/** Bytes per dimension pair of a query in the scan's term table: two run offsets (i32) and two i16 weights. */
export const TERM_BYTES = 12;

/**
 * The compiled SIMD scan (int8-scan.wat), or undefined where V8 has no
 * WebAssembly SIMD (on x86-64 it needs SSE4.1): the same scan then runs in JavaScript.
 */
const scanModule = compileScan();

/** Whether the scan runs as WebAssembly SIMD here. */
export const SIMD_SCAN = scanModule !== undefined;

function compileScan(): WebAssembly.Module | undefined {
  const bytes = Buffer.from(INT8_SCAN_WASM, "base64");
  return WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : undefined;
}

/**
 * Writes the i32 dot product of each of `rows` rows (a multiple of 16) of the
 * int8 block at byte `block` of the memory with the query given as `pairs`
 * term-table entries at byte `terms`, to byte `out` (4 bytes a row). A block
 * stores its rows dimension by dimension; a term-table entry holds two
 * dimensions' byte offsets in the block and their weights (i16, the first in
 * the low half of the third i32).
 */
export type Int8Scan = (block: number, rows: number, terms: number, pairs: number, out: number) => void;

/**
 * The scan over `memory`: WebAssembly SIMD unless `simd` is false or
 * unavailable. The sums are exact integers (wrapping at 32 bits alike), so both
 * give the same numbers.
 */
export function createInt8Scan(memory: WebAssembly.Memory, simd = SIMD_SCAN): Int8Scan {
  if (simd && scanModule) return new WebAssembly.Instance(scanModule, { env: { memory } }).exports.scan as Int8Scan;
  let buffer: ArrayBuffer | undefined;
  let bytes = new Int8Array(0);
  let words = new Int32Array(0);
  return (block, rows, terms, pairs, out) => {
    // Growing the memory replaces its buffer.
    if (memory.buffer !== buffer) {
      buffer = memory.buffer;
      bytes = new Int8Array(buffer);
      words = new Int32Array(buffer);
    }
    const sums = words.subarray(out >> 2, (out >> 2) + rows);
    sums.fill(0);
    for (let p = 0, t = terms >> 2; p < pairs; p++, t += TERM_BYTES / 4) {
      const a = block + words[t]!;
      const b = block + words[t + 1]!;
      const wa = (words[t + 2]! << 16) >> 16;
      const wb = words[t + 2]! >> 16;
      for (let i = 0; i < rows; i++) sums[i] += wa * bytes[a + i]! + wb * bytes[b + i]!;
    }
  };
}
