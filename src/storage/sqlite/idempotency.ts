import type { IdempotencyClaim, IdempotencyRecord, IdempotencyStore } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";
import type { WriteGate } from "./write-gate.js";

/**
 * Idempotency keys: each call is one statement, so processes sharing the
 * database agree on who runs a request.
 *
 * @example
 * const store = createIdempotencyStore(sqlite);
 * const claim = await store.claim(orgId, key, fingerprint, { now, expiredBefore, staleBefore });
 */
export function createIdempotencyStore(sqlite: Sqlite, gate: WriteGate): IdempotencyStore {
  // Takes the key when it is new, expired, or held by a running request that outlived its lease (its process died).
  const claim = sqlite.prepare<[number, string, string, string, string, string], { key: string }>(
    "INSERT INTO idempotency_keys (organization_id, key, fingerprint, state, created_at) VALUES (?, ?, ?, 'running', ?) " +
      "ON CONFLICT (organization_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'running', status = NULL, body = NULL, created_at = excluded.created_at " +
      "WHERE idempotency_keys.created_at < ? OR (idempotency_keys.state = 'running' AND idempotency_keys.created_at < ?) RETURNING key",
  );
  const find = sqlite.prepare<[number, string], IdempotencyRecord>(
    "SELECT fingerprint, state, status, body, created_at FROM idempotency_keys WHERE organization_id = ? AND key = ?",
  );
  const complete = sqlite.prepare<[number, string, number, string, string]>(
    "UPDATE idempotency_keys SET state = 'done', status = ?, body = ? WHERE organization_id = ? AND key = ? AND state = 'running' AND fingerprint = ?",
  );
  const release = sqlite.prepare<[number, string, string]>("DELETE FROM idempotency_keys WHERE organization_id = ? AND key = ? AND state = 'running' AND fingerprint = ?");
  const prune = sqlite.prepare<[string]>("DELETE FROM idempotency_keys WHERE created_at < ?");

  return {
    async claim(organizationId, key, fingerprint, at) {
      return gate.run((): IdempotencyClaim => {
        // A record deleted between the two statements (released, pruned) is retried once more.
        for (let attempt = 0; attempt < 3; attempt++) {
          if (claim.get(organizationId, key, fingerprint, at.now, at.expiredBefore, at.staleBefore)) return { claimed: true };
          const record = find.get(organizationId, key);
          if (record) return { claimed: false, record };
        }
        throw new Error("Idempotency key could not be claimed");
      });
    },

    async complete(organizationId, key, fingerprint, status, body) {
      return gate.run(() => void complete.run(status, body, organizationId, key, fingerprint));
    },

    async release(organizationId, key, fingerprint) {
      return gate.run(() => void release.run(organizationId, key, fingerprint));
    },

    async prune(before) {
      return prune.run(before).changes;
    },
  };
}
