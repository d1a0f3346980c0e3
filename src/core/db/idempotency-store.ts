import type { Db } from "./open.js";

/** A stored `Idempotency-Key` record. */
export interface IdempotencyRecord {
  fingerprint: string;
  state: "running" | "done";
  status: number | null;
  body: string | null;
  created_at: string;
}

/** What {@link IdempotencyStore.claim} found: the key is now the caller's, or someone's record stands. */
export type IdempotencyClaim = { claimed: true } | { claimed: false; record: IdempotencyRecord };

/**
 * Every SQL statement of idempotency keys. Each call is one statement, so
 * instances sharing the database agree on who runs a request. Async, like
 * every storage interface.
 *
 * @example
 * const store = createIdempotencyStore(db);
 * const claim = await store.claim(orgId, key, fingerprint, { now, expiredBefore, staleBefore });
 */
export function createIdempotencyStore(db: Db) {
  const sqlite = db.$client;
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
    /**
     * Claims the key for a request with this fingerprint, or returns the
     * record that stands: a finished answer or a request still running.
     * Records created before `expiredBefore` count as absent, and so do running
     * ones created before `staleBefore`.
     */
    async claim(organizationId: number, key: string, fingerprint: string, at: { now: string; expiredBefore: string; staleBefore: string }): Promise<IdempotencyClaim> {
      // A record deleted between the two statements (released, pruned) is retried once more.
      for (let attempt = 0; attempt < 3; attempt++) {
        if (claim.get(organizationId, key, fingerprint, at.now, at.expiredBefore, at.staleBefore)) return { claimed: true };
        const record = find.get(organizationId, key);
        if (record) return { claimed: false, record };
      }
      throw new Error("Idempotency key could not be claimed");
    },

    /** Stores the answer of the running request that claimed the key. */
    async complete(organizationId: number, key: string, fingerprint: string, status: number, body: string): Promise<void> {
      complete.run(status, body, organizationId, key, fingerprint);
    },

    /** Frees the key of a running request that changed nothing, so a retry runs afresh. */
    async release(organizationId: number, key: string, fingerprint: string): Promise<void> {
      release.run(organizationId, key, fingerprint);
    },

    /** Deletes records created before `before`. */
    async prune(before: string): Promise<number> {
      return prune.run(before).changes;
    },
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
