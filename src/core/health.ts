/** Whether an instance can serve; `reason` says why not, for operators (logs), not for clients. */
export type Health = { ok: true } | { ok: false; reason: string };

export interface HealthCheckOptions {
  /** Longest a probe's result is reused, in ms: health checks never cost more than one probe per interval. */
  intervalMs?: number;
}

/**
 * A health check that runs `probe` (which throws when the instance cannot
 * serve) at most once per `intervalMs` and answers from the last result in
 * between, so many balancers probing often cost one write a second.
 *
 * @example
 * const health = createHealthCheck(createWriteProbe(sqlite));
 * health() // { ok: true } or { ok: false, reason: "The database cannot take writes: database or disk is full" }
 */
export function createHealthCheck(probe: () => void, { intervalMs = 1_000 }: HealthCheckOptions = {}): () => Health {
  let last: Health = { ok: true };
  let checkedAt = -Infinity;
  return () => {
    const now = performance.now();
    if (now - checkedAt < intervalMs) return last;
    checkedAt = now;
    try {
      probe();
      last = { ok: true };
    } catch (error) {
      last = { ok: false, reason: `The database cannot take writes: ${error instanceof Error ? error.message : String(error)}` };
    }
    return last;
  };
}
