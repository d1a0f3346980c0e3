import type { EventOf, LeadRecord, LeadStore, NewLead } from "../../core/storage/index.js";
import type { Recorder } from "./events.js";
import type { Sqlite } from "./open.js";
import type { WriteGate } from "./write-gate.js";

const SELECT = `SELECT l.*, b.name AS agent_name, b.slug AS agent_slug, c.session_id
  FROM leads l JOIN chatbots b ON b.id = l.chatbot_id JOIN conversations c ON c.id = l.conversation_id`;

const FILTERS = `l.organization_id = @organization_id AND (@chatbot_id IS NULL OR l.chatbot_id = @chatbot_id)
  AND (@since IS NULL OR l.created_at >= @since) AND (@until IS NULL OR l.created_at <= @until)`;

export function createLeadStore(sqlite: Sqlite, record: Recorder, gate: WriteGate): LeadStore {
  const byId = sqlite.prepare<[number], LeadRecord>(`${SELECT} WHERE l.id = ?`);
  const insert = sqlite
    .prepare<Record<string, unknown>, number>(
      `INSERT INTO leads (organization_id, chatbot_id, conversation_id, name, email, phone, message, source, source_url, created_at, updated_at)
       VALUES (@organization_id, @chatbot_id, @conversation_id, @name, @email, @phone, @message, @source, @source_url, @created_at, @created_at) RETURNING id`,
    )
    .pluck();
  const update = sqlite.prepare<Record<string, unknown>>(
    `UPDATE leads SET name = coalesce(@name, name), email = coalesce(@email, email), phone = coalesce(@phone, phone),
       company = coalesce(@company, company), message = coalesce(@message, message), updated_at = @updated_at WHERE id = @id`,
  );
  const countPage = sqlite.prepare<Record<string, unknown>, number>(`SELECT COUNT(*) FROM leads l WHERE ${FILTERS}`).pluck();
  const listPage = sqlite.prepare<Record<string, unknown>, LeadRecord>(`${SELECT} WHERE ${FILTERS} ORDER BY l.created_at DESC, l.id DESC LIMIT @limit OFFSET @offset`);

  const exportPage = sqlite.prepare<Record<string, unknown>, LeadRecord>(`${SELECT} WHERE ${FILTERS} AND l.id > @after ORDER BY l.id LIMIT @limit`);

  const capture = sqlite.transaction((lead: NewLead, event: EventOf<LeadRecord>) => {
    const id = insert.get({ ...lead });
    const result = byId.get(id!)!;
    return { result, events: [record(event(result))] };
  });

  return {
    async capture(lead, event) {
      return gate.run(() => capture.immediate(lead, event));
    },
    async find(id) {
      return byId.get(id);
    },
    async update(id, patch) {
      if (update.run({ ...patch, id }).changes === 0) return undefined;
      return byId.get(id);
    },
    async page(filter, { limit, offset }) {
      return { total: countPage.get({ ...filter })!, rows: listPage.all({ ...filter, limit, offset }) };
    },
    async *exportPages(filter, pageSize) {
      for (let after = 0; ; ) {
        const rows = exportPage.all({ ...filter, after, limit: pageSize });
        if (rows.length === 0) return;
        yield rows;
        if (rows.length < pageSize) return;
        after = rows.at(-1)!.id;
      }
    },
  };
}
