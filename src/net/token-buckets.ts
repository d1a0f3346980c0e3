import type { BucketTake, RateLimitStore } from "../core/storage/rate-limits.js";
/** What {@link RateLimiter.take} decided. */
export interface RateDecision {
  /** True when the request may go ahead. */
  ok: boolean;
  /** Whole requests left in the bucket after this one. */
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
  /** Seconds to wait before a refused request can succeed; 0 when `ok`. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Takes `cost` tokens (default 1) from `key`'s bucket, if it holds that many. */
  take(key: string, cost?: number): RateDecision;
  /** Buckets held in memory (for tests and metrics). */
  readonly size: number;
}

export interface RateLimiterOptions {
  /** Largest burst: a new or idle key may make this many requests at once. */
  capacity: number;
  /** Tokens added back per second. */
  refillPerSecond: number;
  /** Most buckets kept; the least recently used go first beyond it. Default 10 000. */
  maxKeys?: number;
  /** Clock in milliseconds; tests pass a fake one. Default `performance.now`. */
  now?: () => number;
}

interface Bucket {
  tokens: number;
  updated: number;
}

/**
 * An in-memory token bucket per key (an IP address, a visitor, an API key).
 * Memory stays bounded: a bucket that has refilled completely behaves exactly
 * like a missing one, so idle buckets are dropped as they are found, and at
 * most `maxKeys` are kept (least recently used evicted first).
 *
 * @example
 * const perIp = createRateLimiter({ capacity: 60, refillPerSecond: 1 });
 * const decision = perIp.take("192.0.2.7");
 * if (!decision.ok) throw new ChatsvcError(429, "Too many requests", { headers: { "retry-after": String(decision.retryAfterSeconds) } });
 */
export function createRateLimiter({ capacity, refillPerSecond, maxKeys = 10_000, now = () => performance.now() }: RateLimiterOptions): RateLimiter {
  if (!(capacity >= 1) || !(refillPerSecond > 0) || !(maxKeys >= 1)) {
    throw new RangeError("createRateLimiter: capacity and maxKeys must be at least 1 and refillPerSecond above 0");
  }
  const perMs = refillPerSecond / 1000;
  // A Map iterates in insertion order; re-inserting on every use makes it least-recently-used first.
  const buckets = new Map<string, Bucket>();

  const level = (bucket: Bucket, at: number) => Math.min(capacity, bucket.tokens + (at - bucket.updated) * perMs);

  const sweep = (at: number) => {
    // Checking the two oldest buckets per new one retires idle ones at the rate new ones arrive.
    let checked = 0;
    for (const [key, bucket] of buckets) {
      if (checked++ === 2) break;
      if (level(bucket, at) >= capacity) buckets.delete(key);
    }
    while (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
  };

  // The most recently used key: already last in the Map's order, so its next use need not move it.
  let newest: string | undefined;

  return {
    take(key, cost = 1) {
      const at = now();
      let bucket = buckets.get(key);
      const added = bucket === undefined;
      if (bucket === undefined) {
        bucket = { tokens: capacity, updated: at };
        buckets.set(key, bucket);
      } else {
        bucket.tokens = level(bucket, at);
        bucket.updated = at;
        if (key !== newest) {
          buckets.delete(key);
          buckets.set(key, bucket);
        }
      }
      newest = key;
      const ok = bucket.tokens >= cost;
      if (ok) bucket.tokens -= cost;
      // Only a new bucket makes the Map grow.
      if (added) sweep(at);
      return {
        ok,
        remaining: Math.floor(bucket.tokens),
        resetMs: Math.ceil((capacity - bucket.tokens) / perMs),
        retryAfterSeconds: ok ? 0 : Math.max(1, Math.ceil((cost - bucket.tokens) / perMs / 1000)),
      };
    },
    get size() {
      return buckets.size;
    },
  };
}

/** Takes from a bucket kept in this process (a decision now) or in a shared store (a decision to wait for). */
export interface BucketLimiter {
  take(key: string, cost?: number): RateDecision | Promise<RateDecision>;
  /** `key`'s bucket as the shared store names it, to take it with others in one round trip; undefined without a shared store. */
  sharedBucket(key: string): BucketTake | undefined;
  /** Takes from this process's bucket for `key`: what decides when the shared store fails. */
  takeLocally(key: string, cost?: number): RateDecision;
}

/**
 * Token buckets that hold for every instance sharing `shared` (the database's
 * rate-limit store), or in-process buckets when there is no shared store (one
 * instance, e.g. on SQLite). `name` keeps each limit's keys apart in the shared
 * store. When the store fails (the database is unreachable a moment), this
 * process's own buckets decide instead: requests are still limited, per instance.
 *
 * @example
 * const perIp = createBucketLimiter("api-ip", { capacity: 600, refillPerSecond: 10 }, storage.rateLimits);
 * const decision = await perIp.take("192.0.2.1");
 */
export function createBucketLimiter(name: string, options: RateLimiterOptions, shared?: RateLimitStore): BucketLimiter {
  const local = createRateLimiter(options);
  const takeLocally = (key: string, cost?: number) => local.take(key, cost);
  if (!shared) return { take: takeLocally, takeLocally, sharedBucket: () => undefined };
  const bucket = { capacity: options.capacity, refillPerSecond: options.refillPerSecond };
  return {
    take: (key, cost = 1) => shared.take(`${name}:${key}`, bucket, cost).catch(() => local.take(key, cost)),
    sharedBucket: (key) => ({ key: `${name}:${key}`, bucket }),
    takeLocally,
  };
}
