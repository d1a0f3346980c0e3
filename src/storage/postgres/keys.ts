import type pg from "pg";
import type { ActiveKeyLimit, KeyAuthRecord, KeyRecord, KeyStore } from "../../core/storage/index.js";
import { all, one, run, statement, transaction, type Queryable } from "./client.js";

const RECORD = `k.id, k.user_id, u.email, k.name, k.prefix, k.status, k.expires_at, k.last_used_at,
  k.attribution_accepted_at, k.attribution_ip, k.created_at`;

// The counter in the same statement, so in the same snapshot as the row: a change committed
// after it moves the counter past the one the key is remembered at (see `keys.confirm`).
const byHash = statement(
  "keys_by_hash",
  `SELECT k.id, k.prefix, k.status, k.expires_at, u.id AS user_id, u.email, u.organization_id,
          coalesce((SELECT revision FROM revisions WHERE scope = 'keys'), 0)::float8 AS revision
     FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = $1`,
);
const byId = statement("keys_by_id", `SELECT ${RECORD} FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.id = $1`);
const list = statement(
  "keys_list",
  `SELECT ${RECORD} FROM api_keys k JOIN users u ON u.id = k.user_id
    WHERE ($1::int IS NULL OR k.user_id = $1) AND ($2::text IS NULL OR u.email = $2) ORDER BY k.id`,
);
// Locking the owner serialises every write that may add an active key for them, so two
// instances creating keys at once cannot both pass the limit.
const lockOwnerById = statement("keys_lock_owner_by_id", "SELECT id, email FROM users WHERE id = $1 FOR UPDATE");
const lockOwnerByEmail = statement("keys_lock_owner_by_email", "SELECT id, email FROM users WHERE email = $1 FOR UPDATE");
const lockOwnerOfKey = statement(
  "keys_lock_owner_of_key",
  "SELECT u.id FROM users u JOIN api_keys k ON k.user_id = u.id WHERE k.id = $1 FOR UPDATE OF u",
);
const activeCount = statement(
  "keys_active_count",
  "SELECT count(*)::int AS n FROM api_keys WHERE user_id = $1 AND status = 'active' AND (expires_at IS NULL OR expires_at > $2)",
);
const insert = statement(
  "keys_insert",
  `INSERT INTO api_keys (user_id, name, prefix, key_hash, status, expires_at, attribution_accepted_at, attribution_ip, created_at)
   VALUES ($1, $2, $3, $4, 'active', $5, $6, $7, $6) RETURNING id`,
);
const rename = statement("keys_rename", "UPDATE api_keys SET name = $2 WHERE id = $1");
const disable = statement("keys_disable", "UPDATE api_keys SET status = 'disabled' WHERE id = $1");
const activate = statement("keys_activate", "UPDATE api_keys SET status = 'active' WHERE id = $1");
const replaceSecret = statement(
  "keys_replace_secret",
  "UPDATE api_keys SET key_hash = $2, prefix = $3, status = 'active', last_used_at = NULL, created_at = $4 WHERE id = $1",
);
const remove = statement("keys_delete", "DELETE FROM api_keys WHERE id = $1");
// One statement for the whole batch: ids and times as parallel arrays.
const touch = statement(
  "keys_touch",
  `UPDATE api_keys k SET last_used_at = t.at FROM unnest($1::int[], $2::text[]) AS t(id, at) WHERE k.id = t.id`,
);

export function createPgKeyStore(pool: pg.Pool): KeyStore {
  const find = (q: Queryable, id: number) => one<KeyRecord>(q, byId, [id]);
  const underLimit = async (tx: Queryable, userId: number, limit: ActiveKeyLimit) =>
    (await one<{ n: number }>(tx, activeCount, [userId, limit.now]))!.n < limit.max;

  return {
    findByHash: (keyHash) => one<KeyAuthRecord>(pool, byHash, [keyHash]),
    find: (id) => find(pool, id),
    list: (filter = {}) => all<KeyRecord>(pool, list, [filter.user_id ?? null, filter.email ?? null]),

    create: (key, limit) =>
      transaction(pool, async (tx) => {
        const owner =
          "id" in key.owner
            ? await one<{ id: number }>(tx, lockOwnerById, [key.owner.id])
            : await one<{ id: number }>(tx, lockOwnerByEmail, [key.owner.email]);
        if (!owner) return "no-user" as const;
        if (!(await underLimit(tx, owner.id, limit))) return "limit" as const;
        const { id } = (await one<{ id: number }>(tx, insert, [owner.id, key.name, key.prefix, key.key_hash, key.expires_at, key.now, key.attribution_ip]))!;
        return (await find(tx, id))!;
      }),

    async rename(id, name) {
      await run(pool, rename, [id, name]);
      return find(pool, id);
    },

    async disable(id) {
      await run(pool, disable, [id]);
      return find(pool, id);
    },

    enable: (id, limit) =>
      transaction(pool, async (tx) => {
        const owner = await one<{ id: number }>(tx, lockOwnerOfKey, [id]);
        const current = owner && (await find(tx, id));
        if (!owner || !current) return "missing" as const;
        if (current.status === "active") return current;
        if (!(await underLimit(tx, owner.id, limit))) return "limit" as const;
        await run(tx, activate, [id]);
        return (await find(tx, id))!;
      }),

    regenerate: (id, secret, limit) =>
      transaction(pool, async (tx) => {
        const owner = await one<{ id: number }>(tx, lockOwnerOfKey, [id]);
        const current = owner && (await find(tx, id));
        if (!owner || !current) return "missing" as const;
        if (current.status !== "active" && !(await underLimit(tx, owner.id, limit))) return "limit" as const;
        await run(tx, replaceSecret, [id, secret.key_hash, secret.prefix, limit.now]);
        return (await find(tx, id))!;
      }),

    delete: async (id) => (await run(pool, remove, [id])) > 0,

    async touch(uses) {
      if (uses.length === 0) return;
      await run(pool, touch, [uses.map(([id]) => id), uses.map(([, at]) => at)]);
    },
  };
}
