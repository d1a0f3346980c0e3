/**
 * Percentile of raw samples (nearest rank on a sorted copy): figures come from
 * every sample, never from averages of averages.
 *
 * @example
 * percentile([5, 1, 3], 50); // 3
 */
export function percentile(samples, p) {
  if (samples.length === 0) return NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** p50, p90, p95, p99, mean and count of latency samples (milliseconds). */
export function summarize(samples) {
  const mean = samples.reduce((a, b) => a + b, 0) / (samples.length || 1);
  return { n: samples.length, p50: percentile(samples, 50), p90: percentile(samples, 90), p95: percentile(samples, 95), p99: percentile(samples, 99), mean };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs `fn` `count` times after `warmup` unmeasured calls; returns the
 * per-call milliseconds. With `yieldBetween`, the event loop turns between
 * calls (untimed), as it does between requests in a server.
 */
export async function timeCalls(fn, { count, warmup = Math.min(20, count), yieldBetween = false }) {
  for (let i = 0; i < warmup; i++) {
    await fn(i);
    if (yieldBetween) await turn();
  }
  const samples = new Array(count);
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await fn(i);
    samples[i] = performance.now() - t;
    if (yieldBetween) await turn();
  }
  return samples;
}
