import type { UserRecord, UserStore } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";

export function createUserStore(sqlite: Sqlite): UserStore {
  const orgExists = sqlite.prepare<[number], { x: number }>("SELECT 1 AS x FROM organizations WHERE id = ?");
  const byEmail = sqlite.prepare<[string], UserRecord>("SELECT * FROM users WHERE email = ?");
  const byId = sqlite.prepare<[number], UserRecord>("SELECT * FROM users WHERE id = ?");
  const insert = sqlite.prepare<[number, string, string | null, string], UserRecord>(
    "INSERT INTO users (organization_id, email, name, created_at) VALUES (?, ?, ?, ?) RETURNING *",
  );
  const all = sqlite.prepare<[], UserRecord>("SELECT * FROM users ORDER BY id");
  const ofOrg = sqlite.prepare<[number], UserRecord>("SELECT * FROM users WHERE organization_id = ? ORDER BY id");

  const create = sqlite.transaction((user: Omit<UserRecord, "id">): UserRecord | "no-organization" | "email-taken" => {
    if (!orgExists.get(user.organization_id)) return "no-organization";
    if (byEmail.get(user.email)) return "email-taken";
    return insert.get(user.organization_id, user.email, user.name, user.created_at)!;
  });

  return {
    async create(user) {
      return create.immediate(user);
    },
    async list(organizationId) {
      return organizationId === undefined ? all.all() : ofOrg.all(organizationId);
    },
    async find(id) {
      return byId.get(id);
    },
    async findByEmail(email) {
      return byEmail.get(email);
    },
  };
}
