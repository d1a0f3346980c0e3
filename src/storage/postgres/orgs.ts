import type pg from "pg";
import type { OrganizationPatch, OrganizationRecord, OrgStore } from "../../core/storage/index.js";
import { all, one, statement } from "./client.js";

const COLUMNS = "id, name, credits_monthly, brand_removal, retention_days, created_at";
const insert = statement(
  "orgs_insert",
  `INSERT INTO organizations (name, credits_monthly, brand_removal, created_at) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
);
const list = statement("orgs_list", `SELECT ${COLUMNS} FROM organizations ORDER BY id`);
const byId = statement("orgs_by_id", `SELECT ${COLUMNS} FROM organizations WHERE id = $1`);
const update = statement(
  "orgs_update",
  `UPDATE organizations SET name = coalesce($2, name), credits_monthly = coalesce($3, credits_monthly), brand_removal = coalesce($4, brand_removal),
     retention_days = CASE WHEN $5 THEN $6::int ELSE retention_days END
    WHERE id = $1 RETURNING ${COLUMNS}`,
);
const any = statement("orgs_any", "SELECT 1 AS x FROM organizations LIMIT 1");
const brandRemoval = statement("orgs_brand_removal", "SELECT brand_removal FROM organizations WHERE id = $1");

export function createPgOrgStore(pool: pg.Pool): OrgStore {
  return {
    async create(org) {
      return (await one<OrganizationRecord>(pool, insert, [org.name, org.credits_monthly, org.brand_removal, org.created_at]))!;
    },
    list: () => all<OrganizationRecord>(pool, list),
    find: (id) => one<OrganizationRecord>(pool, byId, [id]),
    update: (id, patch: OrganizationPatch) => one<OrganizationRecord>(pool, update, [id, patch.name ?? null, patch.credits_monthly ?? null, patch.brand_removal ?? null, patch.retention_days !== undefined, patch.retention_days ?? null]),
    any: async () => (await one(pool, any)) !== undefined,
    brandRemoval: async (id) => (await one<{ brand_removal: boolean }>(pool, brandRemoval, [id]))?.brand_removal === true,
  };
}
