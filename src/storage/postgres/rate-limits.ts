import type pg from "pg";
import type { BucketDecision, RateLimitStore, RequestTake, TokenBucket } from "../../core/storage/rate-limits.js";
import { one, run, statement } from "./client.js";

/** How often an instance deletes buckets that are full again (they say nothing a missing row would not). */
const PRUNE_INTERVAL_MS = 5 * 60_000;

/**
 * The upsert taking `cost` tokens from one bucket, given the parameter numbers of its
 * key, capacity and tokens per millisecond, and SQL for the cost and the current time.
 * `b` is the stored bucket, `excluded.updated_ms` now. A take reads the clock before it
 * waits for the row, so the take before it may have read a later time: the bucket's time
 * never goes back (a negative refill once refused the last token with a Retry-After of 1 s,
 * and handed it to a later take).
 */
function takeFrom({ key, capacity, perMs }: { key: number; capacity: number; perMs: number }, cost: string, from: string): string {
  const now = "greatest(b.updated_ms, excluded.updated_ms)";
  const level = `least($${capacity}::float8, b.tokens + (${now} - b.updated_ms) * $${perMs}::float8)`;
  const after = `${level} - CASE WHEN ${level} >= ${cost} THEN ${cost} ELSE 0 END`;
  return `INSERT INTO rate_buckets AS b (key, tokens, updated_ms, full_ms, ok)
   SELECT $${key}, $${capacity}::float8 - CASE WHEN $${capacity} >= ${cost} THEN ${cost} ELSE 0 END, ms,
          ms + CASE WHEN $${capacity} >= ${cost} THEN ${cost} ELSE 0 END / $${perMs}::float8, $${capacity} >= ${cost}
     ${from}
   ON CONFLICT (key) DO UPDATE SET
     ok = ${level} >= ${cost},
     tokens = ${after},
     full_ms = ${now} + ($${capacity}::float8 - (${after})) / $${perMs}::float8,
     updated_ms = ${now}
   RETURNING tokens, ok`;
}

const NOW_MS = "extract(epoch FROM clock_timestamp())::float8 * 1000";

/*
 * Why not rate-limiter-flexible's PostgreSQL store: it counts fixed windows, while
 * chatsvc's documented limits (and SQLite's in-process buckets) are token buckets:
 * bursts of up to N, refilled evenly, `Retry-After` the time until one request fits.
 * A fixed window lets 2N through across a window edge and would answer another
 * Retry-After on each engine. The bucket is one upsert, the same single round trip
 * as the library's, atomic across instances (ON CONFLICT locks the row and computes
 * from its latest version), on the database's clock so drifting instance clocks agree.
 */
// $1 key, $2 capacity, $3 tokens per millisecond, $4 cost.
const take = statement("rate_take", takeFrom({ key: 1, capacity: 2, perMs: 3 }, "$4", `FROM (SELECT ${NOW_MS} AS ms) AS now`));

/*
 * A request's two buckets ($1-$3 and $4-$6, each key null when not taken) and the
 * `keys` counter in one statement. The second bucket is taken only when the first
 * had a token, as two takes in a row would; callers put the client IP's first, so
 * concurrent requests lock bucket rows in one order. One snapshot: the counter is
 * as committed when the statement started, after the request arrived.
 */
const takeForRequest = statement(
  "rate_take_for_request",
  `WITH now AS (SELECT ${NOW_MS} AS ms),
   first AS (${takeFrom({ key: 1, capacity: 2, perMs: 3 }, "1", "FROM now WHERE $1::text IS NOT NULL")}),
   second AS (${takeFrom({ key: 4, capacity: 5, perMs: 6 }, "1", "FROM now WHERE $4::text IS NOT NULL AND coalesce((SELECT ok FROM first), true)")})
   SELECT (SELECT tokens FROM first) AS first_tokens, (SELECT ok FROM first) AS first_ok,
          (SELECT tokens FROM second) AS second_tokens, (SELECT ok FROM second) AS second_ok,
          coalesce((SELECT revision FROM revisions WHERE scope = 'keys'), 0)::float8 AS keys_revision`,
);
const keysCounter = statement("rate_keys_counter", "SELECT coalesce((SELECT revision FROM revisions WHERE scope = 'keys'), 0)::float8 AS keys_revision");
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
  const readCounter = async () => (await one<{ keys_revision: number }>(pool, keysCounter))!.keys_revision;
  // At most one counter read under way: a caller arriving while one is cannot use it (it may
  // have started before the caller's request arrived), so it waits for the next, which starts
  // once that one is done and serves everyone who arrived meanwhile.
  let reading: Promise<number> | undefined;
  let nextRead: Promise<number> | undefined;
  const counterReadAfterNow = (): Promise<number> => {
    if (!reading) {
      reading = readCounter().finally(() => (reading = undefined));
      return reading;
    }
    nextRead ??= reading.then(
      () => ((nextRead = undefined), counterReadAfterNow()),
      () => ((nextRead = undefined), counterReadAfterNow()),
    );
    return nextRead;
  };
  return {
    async take(key, bucket, cost = 1): Promise<BucketDecision> {
      const { tokens, ok } = (await one<{ tokens: number; ok: boolean }>(pool, take, [key, bucket.capacity, bucket.refillPerSecond / 1000, cost]))!;
      return decision(bucket, tokens, ok, cost);
    },
    async takeForRequest(takes): Promise<RequestTake> {
      if (takes.length > 2) throw new RangeError("takeForRequest: at most two buckets");
      if (takes.length === 0) return { decisions: [], keysRevision: await counterReadAfterNow() };
      const values = [takes[0], takes[1]].flatMap((t) => (t ? [t.key, t.bucket.capacity, t.bucket.refillPerSecond / 1000] : [null, 1, 1]));
      const row = (await one<RequestRow>(pool, takeForRequest, values))!;
      const found: [number | null, boolean | null][] = [
        [row.first_tokens, row.first_ok],
        [row.second_tokens, row.second_ok],
      ];
      return {
        decisions: takes.map((t, i) => {
          const [tokens, ok] = found[i]!;
          return tokens === null || ok === null ? undefined : decision(t.bucket, tokens, ok, 1);
        }),
        keysRevision: row.keys_revision,
      };
    },
    close: () => clearInterval(timer),
  };
}

interface RequestRow {
  first_tokens: number | null;
  first_ok: boolean | null;
  second_tokens: number | null;
  second_ok: boolean | null;
  keys_revision: number;
}

/** A bucket's level after a take, as the figures an in-process bucket gives. */
function decision({ capacity, refillPerSecond }: TokenBucket, tokens: number, ok: boolean, cost: number): BucketDecision {
  const perMs = refillPerSecond / 1000;
  return {
    ok,
    remaining: Math.floor(tokens),
    resetMs: Math.ceil((capacity - tokens) / perMs),
    retryAfterSeconds: ok ? 0 : Math.max(1, Math.ceil((cost - tokens) / perMs / 1000)),
  };
}
