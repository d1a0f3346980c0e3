import type { OrganizationRecord, OrgStore } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";

type Row = Omit<OrganizationRecord, "brand_removal"> & { brand_removal: number };

const toRecord = (row: Row): OrganizationRecord => ({ ...row, brand_removal: row.brand_removal !== 0 });

export function createOrgStore(sqlite: Sqlite): OrgStore {
  const insert = sqlite.prepare<[string, number, number, string], Row>(
    "INSERT INTO organizations (name, credits_monthly, brand_removal, created_at) VALUES (?, ?, ?, ?) RETURNING *",
  );
  const all = sqlite.prepare<[], Row>("SELECT * FROM organizations ORDER BY id");
  const byId = sqlite.prepare<[number], Row>("SELECT * FROM organizations WHERE id = ?");
  const update = sqlite.prepare<{ id: number; name: string | null; credits: number | null; brand: number | null; set_retention: number; retention: number | null }, Row>(
    `UPDATE organizations SET name = coalesce(@name, name), credits_monthly = coalesce(@credits, credits_monthly),
       brand_removal = coalesce(@brand, brand_removal),
       retention_days = CASE WHEN @set_retention = 1 THEN @retention ELSE retention_days END WHERE id = @id RETURNING *`,
  );
  const any = sqlite.prepare<[], { x: number }>("SELECT 1 AS x FROM organizations LIMIT 1");
  const brandRemoval = sqlite.prepare<[number], number>("SELECT brand_removal FROM organizations WHERE id = ?").pluck();

  return {
    async create(org) {
      return toRecord(insert.get(org.name, org.credits_monthly, org.brand_removal ? 1 : 0, org.created_at)!);
    },
    async list() {
      return all.all().map(toRecord);
    },
    async find(id) {
      const row = byId.get(id);
      return row && toRecord(row);
    },
    async update(id, patch) {
      const row = update.get({
        id,
        name: patch.name ?? null,
        credits: patch.credits_monthly ?? null,
        brand: patch.brand_removal === undefined ? null : patch.brand_removal ? 1 : 0,
        // Null is a value here (no retention), so whether to set it travels apart.
        set_retention: patch.retention_days === undefined ? 0 : 1,
        retention: patch.retention_days ?? null,
      });
      return row && toRecord(row);
    },
    async any() {
      return any.get() !== undefined;
    },
    async brandRemoval(id) {
      return brandRemoval.get(id) === 1;
    },
  };
}
