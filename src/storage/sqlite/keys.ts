import type { ActiveKeyLimit, KeyAuthRecord, KeyRecord, KeyStore, NewKey } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";
import type { WriteGate } from "./write-gate.js";

const SELECT = `SELECT k.id, k.user_id, u.email, k.name, k.prefix, k.status, k.expires_at, k.last_used_at,
  k.attribution_accepted_at, k.attribution_ip, k.created_at FROM api_keys k JOIN users u ON u.id = k.user_id`;

export function createKeyStore(sqlite: Sqlite, gate: WriteGate): KeyStore {
  // The lookup every authenticated request makes whose key is not cached.
  const byHash = sqlite.prepare<[string], KeyAuthRecord>(
    `SELECT k.id, k.prefix, k.status, k.expires_at, u.id AS user_id, u.email, u.organization_id
       FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?`,
  );
  const byId = sqlite.prepare<[number], KeyRecord>(`${SELECT} WHERE k.id = ?`);
  const all = sqlite.prepare<[], KeyRecord>(`${SELECT} ORDER BY k.id`);
  const ofUser = sqlite.prepare<[number], KeyRecord>(`${SELECT} WHERE k.user_id = ? ORDER BY k.id`);
  const ofEmail = sqlite.prepare<[string], KeyRecord>(`${SELECT} WHERE u.email = ? ORDER BY k.id`);
  const userById = sqlite.prepare<[number], { id: number }>("SELECT id FROM users WHERE id = ?");
  const userByEmail = sqlite.prepare<[string], { id: number }>("SELECT id FROM users WHERE email = ?");
  const activeCount = sqlite
    .prepare<[number, string], number>("SELECT count(*) FROM api_keys WHERE user_id = ? AND status = 'active' AND (expires_at IS NULL OR expires_at > ?)")
    .pluck();
  const insert = sqlite.prepare<[number, string, string, string, string | null, string, string | null, string], { id: number }>(
    `INSERT INTO api_keys (user_id, name, prefix, key_hash, status, expires_at, attribution_accepted_at, attribution_ip, created_at)
     VALUES (?, ?, ?, ?, 'active', ?, ?, ?, ?) RETURNING id`,
  );
  const rename = sqlite.prepare<[string, number]>("UPDATE api_keys SET name = ? WHERE id = ?");
  const setStatus = sqlite.prepare<[string, number]>("UPDATE api_keys SET status = ? WHERE id = ?");
  const resecret = sqlite.prepare<[string, string, string, number]>(
    "UPDATE api_keys SET key_hash = ?, prefix = ?, status = 'active', last_used_at = NULL, created_at = ? WHERE id = ?",
  );
  const remove = sqlite.prepare<[number]>("DELETE FROM api_keys WHERE id = ?");
  const touchOne = sqlite.prepare<[string, number]>("UPDATE api_keys SET last_used_at = ? WHERE id = ?");

  const overLimit = (userId: number, limit: ActiveKeyLimit) => activeCount.get(userId, limit.now)! >= limit.max;

  const create = sqlite.transaction((key: NewKey, limit: ActiveKeyLimit): KeyRecord | "no-user" | "limit" => {
    const owner = "id" in key.owner ? userById.get(key.owner.id) : userByEmail.get(key.owner.email);
    if (!owner) return "no-user";
    if (overLimit(owner.id, limit)) return "limit";
    const { id } = insert.get(owner.id, key.name, key.prefix, key.key_hash, key.expires_at, key.now, key.attribution_ip, key.now)!;
    return byId.get(id)!;
  });

  const enable = sqlite.transaction((id: number, limit: ActiveKeyLimit): KeyRecord | "missing" | "limit" => {
    const found = byId.get(id);
    if (!found) return "missing";
    if (found.status === "active") return found;
    if (overLimit(found.user_id, limit)) return "limit";
    setStatus.run("active", id);
    return byId.get(id)!;
  });

  const regenerate = sqlite.transaction((id: number, secret: { key_hash: string; prefix: string }, limit: ActiveKeyLimit): KeyRecord | "missing" | "limit" => {
    const found = byId.get(id);
    if (!found) return "missing";
    if (found.status !== "active" && overLimit(found.user_id, limit)) return "limit";
    resecret.run(secret.key_hash, secret.prefix, limit.now, id);
    return byId.get(id)!;
  });

  const touch = sqlite.transaction((uses: [number, string][]) => {
    for (const [id, at] of uses) touchOne.run(at, id);
  });

  return {
    async findByHash(keyHash) {
      return byHash.get(keyHash);
    },
    async find(id) {
      return byId.get(id);
    },
    async list(filter = {}) {
      if (filter.user_id !== undefined) return ofUser.all(filter.user_id);
      if (filter.email !== undefined) return ofEmail.all(filter.email);
      return all.all();
    },
    async create(key, limit) {
      return create.immediate(key, limit);
    },
    async rename(id, name) {
      return rename.run(name, id).changes === 0 ? undefined : byId.get(id);
    },
    async disable(id) {
      return setStatus.run("disabled", id).changes === 0 ? undefined : byId.get(id);
    },
    async enable(id, limit) {
      return enable.immediate(id, limit);
    },
    async regenerate(id, secret, limit) {
      return regenerate.immediate(id, secret, limit);
    },
    async delete(id) {
      return remove.run(id).changes > 0;
    },
    async touch(uses) {
      if (uses.length > 0) return gate.run(() => touch(uses));
    },
  };
}
