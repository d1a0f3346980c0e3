import type pg from "pg";
import type { IdempotencyClaim, IdempotencyRecord, IdempotencyStore } from "../../core/storage/index.js";
import { one, run, statement } from "./client.js";

// Takes the key when it is new, expired, or held by a running request that outlived its lease (its instance died).
const claim = statement(
  "idempotency_claim",
  `INSERT INTO idempotency_keys AS k (organization_id, key, fingerprint, state, created_at) VALUES ($1, $2, $3, 'running', $4)
   ON CONFLICT (organization_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'running', status = NULL, body = NULL, created_at = excluded.created_at
     WHERE k.created_at < $5 OR (k.state = 'running' AND k.created_at < $6)
   RETURNING key`,
);
const find = statement("idempotency_find", "SELECT fingerprint, state, status, body, created_at FROM idempotency_keys WHERE organization_id = $1 AND key = $2");
const complete = statement(
  "idempotency_complete",
  "UPDATE idempotency_keys SET state = 'done', status = $3, body = $4 WHERE organization_id = $1 AND key = $2 AND state = 'running' AND fingerprint = $5",
);
const release = statement("idempotency_release", "DELETE FROM idempotency_keys WHERE organization_id = $1 AND key = $2 AND state = 'running' AND fingerprint = $3");
const prune = statement("idempotency_prune", "DELETE FROM idempotency_keys WHERE created_at < $1");

/**
 * `Idempotency-Key` records on PostgreSQL: the claim is one upsert, so instances
 * sharing the database agree on which of them runs a request.
 *
 * @example
 * const keys = createPgIdempotencyStore(pool);
 * const claimed = await keys.claim(orgId, key, fingerprint, { now, expiredBefore, staleBefore });
 */
export function createPgIdempotencyStore(pool: pg.Pool): IdempotencyStore {
  return {
    async claim(organizationId: number, key: string, fingerprint: string, at: { now: string; expiredBefore: string; staleBefore: string }): Promise<IdempotencyClaim> {
      // A record deleted between the two statements (released, pruned) is retried.
      for (let attempt = 0; attempt < 3; attempt++) {
        if (await one(pool, claim, [organizationId, key, fingerprint, at.now, at.expiredBefore, at.staleBefore])) return { claimed: true };
        const record = await one<IdempotencyRecord>(pool, find, [organizationId, key]);
        if (record) return { claimed: false, record };
      }
      throw new Error("Idempotency key could not be claimed");
    },
    async complete(organizationId: number, key: string, fingerprint: string, status: number, body: string): Promise<void> {
      await run(pool, complete, [organizationId, key, status, body, fingerprint]);
    },
    async release(organizationId: number, key: string, fingerprint: string): Promise<void> {
      await run(pool, release, [organizationId, key, fingerprint]);
    },
    prune: (before: string): Promise<number> => run(pool, prune, [before]),
  };
}
