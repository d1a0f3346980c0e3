import type pg from "pg";
import type { WebhookRecord, WebhookStore } from "../../core/storage/index.js";
import { all, one, run, sqlState, statement, transaction } from "./client.js";

const COLUMNS = `id, organization_id, name, url, events, secret, is_active, total_triggers, failed_triggers, last_triggered_at,
  last_failure_at, last_failure_status, last_failure_error, created_at, updated_at`;

// Registering the same URL again updates that webhook: the unique index on (organisation, url)
// decides, so instances registering at once end with one row. `xmax = 0` tells an insert from an update.
const register = statement(
  "webhooks_register",
  `INSERT INTO webhooks (organization_id, name, url, events, secret, is_active, created_at, updated_at)
   VALUES ($1, coalesce($2, $3), $4, $5, $6, true, $7, $7)
   ON CONFLICT (organization_id, url) DO UPDATE SET events = excluded.events, name = coalesce($2, webhooks.name), is_active = true, updated_at = excluded.updated_at
   RETURNING ${COLUMNS}, (xmax = 0) AS created`,
);
const list = statement("webhooks_list", `SELECT ${COLUMNS} FROM webhooks WHERE $1::int IS NULL OR organization_id = $1 ORDER BY id`);
const byId = statement("webhooks_by_id", `SELECT ${COLUMNS} FROM webhooks WHERE id = $1`);
const ownerForUpdate = statement("webhooks_owner_for_update", "SELECT organization_id FROM webhooks WHERE id = $1 FOR UPDATE");
const remove = statement("webhooks_delete", "DELETE FROM webhooks WHERE id = $1");

export function createPgWebhookStore(pool: pg.Pool): WebhookStore {
  return {
    async register(r) {
      try {
        const row = (await one<WebhookRecord & { created: boolean }>(pool, register, [
          r.organization_id,
          r.name,
          r.default_name,
          r.url,
          JSON.stringify(r.events),
          r.secret,
          r.now,
        ]))!;
        const { created, ...webhook } = row;
        return { created, webhook };
      } catch (error) {
        if (sqlState(error) === "23503") return "no-organization";
        throw error;
      }
    },
    list: (organizationId) => all<WebhookRecord>(pool, list, [organizationId ?? null]),
    find: (id) => one<WebhookRecord>(pool, byId, [id]),
    delete: (id, organizationId) =>
      transaction(pool, async (tx) => {
        const owner = await one<{ organization_id: number }>(tx, ownerForUpdate, [id]);
        if (!owner) return "missing" as const;
        if (owner.organization_id !== organizationId) return "forbidden" as const;
        // Its deliveries go with it (foreign key cascade).
        await run(tx, remove, [id]);
        return "deleted" as const;
      }),
  };
}
