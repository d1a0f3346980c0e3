/** A token bucket: bursts of up to `capacity` requests, refilled evenly at `refillPerSecond`. */
export interface TokenBucket {
  capacity: number;
  refillPerSecond: number;
}

/** What taking from a bucket decided (the same figures an in-process bucket gives). */
export interface BucketDecision {
  /** True when the request may go ahead. */
  ok: boolean;
  /** Whole requests left in the bucket after this one. */
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
  /** Seconds to wait before a refused request can succeed; 0 when `ok`. */
  retryAfterSeconds: number;
}

/**
 * Rate-limit buckets kept in the database, for engines that several instances
 * share: a limit then holds for the whole cluster instead of once per instance.
 * Engines serving one process leave it out and the caller keeps buckets in memory.
 */
export interface RateLimitStore {
  /** Takes `cost` tokens from `key`'s bucket if it holds that many, in one atomic step. */
  take(key: string, bucket: TokenBucket, cost?: number): Promise<BucketDecision>;
}
