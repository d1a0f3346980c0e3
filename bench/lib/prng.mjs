/**
 * Seeded pseudo-random numbers (mulberry32): the same seed always yields the
 * same datasets, so runs on different machines measure the same work.
 *
 * @example
 * const rand = createRandom(42);
 * rand(); // 0.6011037519201636, always
 */
export function createRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seed derived from a base seed and a label, so each document can be generated on its own. */
export function deriveSeed(seed, label) {
  let h = (seed ^ 0x811c9dc5) >>> 0;
  const s = String(label);
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * Draws indexes 0..n-1 with a Zipf-like law (rank r has weight 1/(r+1)^s), the
 * way word frequencies fall off in real text.
 *
 * @example
 * const pick = createZipf(10_000, 1.05);
 * pick(rand); // 0 most often, then 1, ...
 */
export function createZipf(n, s = 1.05) {
  const cdf = new Float64Array(n);
  let total = 0;
  for (let r = 0; r < n; r++) cdf[r] = total += 1 / Math.pow(r + 1, s);
  for (let r = 0; r < n; r++) cdf[r] /= total;
  return (rand) => {
    const u = rand();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}
