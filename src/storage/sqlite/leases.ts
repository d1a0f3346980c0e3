import type { LeaseStore } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";
import type { WriteGate } from "./write-gate.js";

// $name $holder $expires $now $dueBefore: the update runs only when the lease is free, expired or the
// holder's own, and the last completed run is old enough; RETURNING gives no row when it did not.
const ACQUIRE = `INSERT INTO leases (name, holder, expires_ms) VALUES ($name, $holder, $expires)
  ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, expires_ms = excluded.expires_ms
  WHERE (leases.holder = excluded.holder OR leases.expires_ms <= $now)
    AND ($dueBefore IS NULL OR leases.last_run_ms IS NULL OR leases.last_run_ms <= $dueBefore)
  RETURNING holder`;

export function createLeaseStore(sqlite: Sqlite, gate: WriteGate): LeaseStore {
  const acquire = sqlite.prepare(ACQUIRE).pluck();
  const release = sqlite.prepare(
    "UPDATE leases SET expires_ms = 0, last_run_ms = CASE WHEN $completed THEN $now ELSE last_run_ms END WHERE name = $name AND holder = $holder",
  );
  return {
    async acquire(name, holder, { ttlMs, minIntervalMs }) {
      const now = Date.now();
      const dueBefore = minIntervalMs === undefined ? null : now - minIntervalMs;
      return gate.run(() => acquire.get({ name, holder, expires: now + ttlMs, now, dueBefore }) !== undefined);
    },
    async release(name, holder, completed = false) {
      return gate.run(() => void release.run({ name, holder, now: Date.now(), completed: completed ? 1 : 0 }));
    },
  };
}
