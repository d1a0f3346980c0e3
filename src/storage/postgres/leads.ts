import type pg from "pg";
import type { LeadRecord, LeadStore, OutboxEncoder } from "../../core/storage/index.js";
import { all, one, statement, transaction } from "./client.js";
import { recordEvent } from "./events.js";

const RECORD = `l.id, l.organization_id, l.chatbot_id, l.conversation_id, l.name, l.email, l.phone, l.company, l.message,
  l.source, l.source_url, l.created_at, l.updated_at, b.name AS agent_name, b.slug AS agent_slug, c.session_id`;
const FROM = "leads l JOIN chatbots b ON b.id = l.chatbot_id JOIN conversations c ON c.id = l.conversation_id";
const FILTERS = `l.organization_id = $1 AND ($2::int IS NULL OR l.chatbot_id = $2)
  AND ($3::text IS NULL OR l.created_at >= $3) AND ($4::text IS NULL OR l.created_at <= $4)`;

const insert = statement(
  "leads_insert",
  `INSERT INTO leads (organization_id, chatbot_id, conversation_id, name, email, phone, message, source, source_url, created_at, updated_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING id`,
);
const byId = statement("leads_by_id", `SELECT ${RECORD} FROM ${FROM} WHERE l.id = $1`);
const update = statement(
  "leads_update",
  `UPDATE leads SET name = coalesce($2, name), email = coalesce($3, email), phone = coalesce($4, phone),
     company = coalesce($5, company), message = coalesce($6, message), updated_at = $7 WHERE id = $1`,
);
const countPage = statement("leads_count_page", `SELECT count(*)::int AS n FROM leads l WHERE ${FILTERS}`);
const listPage = statement("leads_list_page", `SELECT ${RECORD} FROM ${FROM} WHERE ${FILTERS} ORDER BY l.created_at DESC, l.id DESC LIMIT $5 OFFSET $6`);

const exportPage = statement("leads_export_page", `SELECT ${RECORD} FROM ${FROM} WHERE ${FILTERS} AND l.id > $5 ORDER BY l.id LIMIT $6`);

export function createPgLeadStore(pool: pg.Pool, encode: OutboxEncoder, onQueued: (deliveries: number) => void): LeadStore {
  return {
    async capture(lead, event) {
      const written = await transaction(pool, async (tx) => {
        const { id } = (await one<{ id: number }>(tx, insert, [
          lead.organization_id,
          lead.chatbot_id,
          lead.conversation_id,
          lead.name,
          lead.email,
          lead.phone,
          lead.message,
          lead.source,
          lead.source_url,
          lead.created_at,
        ]))!;
        const stored = (await one<LeadRecord>(tx, byId, [id]))!;
        return { result: stored, events: [await recordEvent(tx, encode, event(stored))] };
      });
      if (written.events[0]!.deliveries > 0) onQueued(written.events[0]!.deliveries);
      return written;
    },

    find: (id) => one<LeadRecord>(pool, byId, [id]),

    update: (id, patch) =>
      transaction(pool, async (tx) => {
        await one(tx, update, [id, patch.name, patch.email, patch.phone, patch.company, patch.message, patch.updated_at]);
        return one<LeadRecord>(tx, byId, [id]);
      }),

    async page(filter, { limit, offset }) {
      const values = [filter.organization_id, filter.chatbot_id, filter.since, filter.until];
      const [count, rows] = await Promise.all([one<{ n: number }>(pool, countPage, values), all<LeadRecord>(pool, listPage, [...values, limit, offset])]);
      return { total: count!.n, rows };
    },

    async *exportPages(filter, pageSize) {
      const values = [filter.organization_id, filter.chatbot_id, filter.since, filter.until];
      for (let after = 0; ; ) {
        const rows = await all<LeadRecord>(pool, exportPage, [...values, after, pageSize]);
        if (rows.length === 0) return;
        yield rows;
        if (rows.length < pageSize) return;
        after = rows.at(-1)!.id;
      }
    },
  };
}
