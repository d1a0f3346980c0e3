/** Whether an instance can serve; `reason` says why not, for operators (logs), not for clients. */
export type Health = { ok: true } | { ok: false; reason: string };

export interface HealthCheckOptions {
  /** Longest a probe's result is reused, in ms: health checks never cost more than one probe per interval. */
  intervalMs?: number;
}

/**
 * A health check that runs `probe` (which throws when the instance cannot
 * serve) at most once per `intervalMs` and answers from the last result in
 * between, so many balancers probing often cost one write a second. Probes
 * asked for while one runs share its answer.
 *
 * @example
 * const health = createHealthCheck(() => storage.probeWrite());
 * await health() // { ok: true } or { ok: false, reason: "The database cannot take writes: database or disk is full" }
 */
export function createHealthCheck(probe: () => Promise<void>, { intervalMs = 1_000 }: HealthCheckOptions = {}): () => Promise<Health> {
  let last: Promise<Health> = Promise.resolve({ ok: true });
  let checkedAt = -Infinity;
  return () => {
    const now = performance.now();
    if (now - checkedAt < intervalMs) return last;
    checkedAt = now;
    last = probe().then(
      (): Health => ({ ok: true }),
      (error: unknown): Health => ({ ok: false, reason: `The database cannot take writes: ${error instanceof Error ? error.message : String(error)}` }),
    );
    return last;
  };
}
