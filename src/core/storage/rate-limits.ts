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

/** One bucket a request takes a token from: its key in the store and its size. */
export interface BucketTake {
  key: string;
  bucket: TokenBucket;
}

/** What {@link RateLimitStore.takeForRequest} found. */
export interface RequestTake {
  /** One per bucket given, in order; undefined for a bucket left alone because an earlier one refused. */
  decisions: (BucketDecision | undefined)[];
  /**
   * The `keys` change counter as the same statement saw it, i.e. as committed
   * when the request was already being answered: a key remembered as verified
   * at this counter has not changed since (see `keys.confirm`).
   */
  keysRevision: number;
}

/**
 * Rate-limit buckets kept in the database, for engines that several instances
 * share: a limit then holds for the whole cluster instead of once per instance.
 * Engines serving one process leave it out and the caller keeps buckets in memory.
 */
export interface RateLimitStore {
  /** Takes `cost` tokens from `key`'s bucket if it holds that many, in one atomic step. */
  take(key: string, bucket: TokenBucket, cost?: number): Promise<BucketDecision>;
  /**
   * An authenticated request's shared state in one round trip: one token from
   * each of up to two buckets, in order, the second only when the first had
   * one (as two takes one after the other would), and the `keys` change counter.
   * With no bucket it only reads the counter; callers may then share a read,
   * but only one that started after each of them called.
   */
  takeForRequest(takes: readonly BucketTake[]): Promise<RequestTake>;
}
