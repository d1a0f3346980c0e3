import type pg from "pg";
import type { LeaseStore } from "../../core/storage/index.js";
import { one, run, statement } from "./client.js";

const NOW_MS = "extract(epoch FROM clock_timestamp())::float8 * 1000";

// $1 name, $2 holder, $3 ttl ms, $4 min interval ms or null. The database's clock, so instances with
// drifting clocks agree on expiry; the conflict update runs only when the lease is free, expired or the
// holder's own and the last completed run is old enough, and RETURNING gives no row when it did not.
const acquire = statement(
  "lease_acquire",
  `INSERT INTO leases AS l (name, holder, expires_ms) SELECT $1, $2, ms + $3::float8 FROM (SELECT ${NOW_MS} AS ms) AS now
   ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_ms = excluded.expires_ms
   WHERE (l.holder = excluded.holder OR l.expires_ms <= excluded.expires_ms - $3::float8)
     AND ($4::float8 IS NULL OR l.last_run_ms IS NULL OR l.last_run_ms <= excluded.expires_ms - $3::float8 - $4::float8)
   RETURNING holder`,
);
const release = statement(
  "lease_release",
  `UPDATE leases SET expires_ms = 0, last_run_ms = CASE WHEN $3 THEN ${NOW_MS} ELSE last_run_ms END WHERE name = $1 AND holder = $2`,
);

export function createPgLeaseStore(pool: pg.Pool): LeaseStore {
  return {
    acquire: async (name, holder, { ttlMs, minIntervalMs }) =>
      (await one(pool, acquire, [name, holder, ttlMs, minIntervalMs ?? null])) !== undefined,
    async release(name, holder, completed = false) {
      await run(pool, release, [name, holder, completed]);
    },
  };
}
