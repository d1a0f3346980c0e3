import type pg from "pg";
import type { BucketDecision, RateLimitStore } from "../../core/storage/rate-limits.js";
import { one, run, statement } from "./client.js";

/** How often an instance deletes buckets that are full again (they say nothing a missing row would not). */
const PRUNE_INTERVAL_MS = 5 * 60_000;

// $1 key, $2 capacity, $3 tokens per millisecond, $4 cost; `b` is the stored bucket, `excluded.updated_ms` now.
const level = "least($2::float8, b.tokens + (excluded.updated_ms - b.updated_ms) * $3::float8)";
const after = `${level} - CASE WHEN ${level} >= $4 THEN $4 ELSE 0 END`;

/*
 * Why not rate-limiter-flexible's PostgreSQL store: it counts fixed windows, while
 * chatsvc's documented limits (and SQLite's in-process buckets) are token buckets:
 * bursts of up to N, refilled evenly, `Retry-After` the time until one request fits.
 * A fixed window lets 2N through across a window edge and would answer another
 * Retry-After on each engine. The bucket is one upsert, the same single round trip
 * as the library's, atomic across instances (ON CONFLICT locks the row and computes
 * from its latest version), on the database's clock so drifting instance clocks agree.
 */
const take = statement(
  "rate_take",
  `INSERT INTO rate_buckets AS b (key, tokens, updated_ms, full_ms, ok)
   SELECT $1, $2::float8 - CASE WHEN $2 >= $4 THEN $4 ELSE 0 END, ms, ms + CASE WHEN $2 >= $4 THEN $4 ELSE 0 END / $3::float8, $2 >= $4
     FROM (SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 AS ms) AS now
   ON CONFLICT (key) DO UPDATE SET
     ok = ${level} >= $4,
     tokens = ${after},
     full_ms = excluded.updated_ms + ($2::float8 - (${after})) / $3::float8,
     updated_ms = excluded.updated_ms
   RETURNING tokens, ok`,
);
const prune = statement("rate_prune", "DELETE FROM rate_buckets WHERE full_ms < extract(epoch FROM clock_timestamp())::float8 * 1000");

/**
 * Token buckets in PostgreSQL, shared by every instance on the database.
 *
 * @example
 * const limits = createPgRateLimitStore(pool);
 * const decision = await limits.take("ip:192.0.2.1", { capacity: 600, refillPerSecond: 10 });
 */
export function createPgRateLimitStore(pool: pg.Pool): RateLimitStore & { close(): void } {
  const timer = setInterval(() => void run(pool, prune).catch(() => {}), PRUNE_INTERVAL_MS);
  timer.unref();
  return {
    async take(key, { capacity, refillPerSecond }, cost = 1): Promise<BucketDecision> {
      const perMs = refillPerSecond / 1000;
      const { tokens, ok } = (await one<{ tokens: number; ok: boolean }>(pool, take, [key, capacity, perMs, cost]))!;
      return {
        ok,
        remaining: Math.floor(tokens),
        resetMs: Math.ceil((capacity - tokens) / perMs),
        retryAfterSeconds: ok ? 0 : Math.max(1, Math.ceil((cost - tokens) / perMs / 1000)),
      };
    },
    close: () => clearInterval(timer),
  };
}
