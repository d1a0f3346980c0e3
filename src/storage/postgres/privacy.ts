import type pg from "pg";
import type { AuditRecord, DeletedCounts, NewAuditEntry, PrivacyStore } from "../../core/storage/index.js";
import { all, run, statement, transaction, type Queryable } from "./client.js";

// FOR UPDATE: a turn being stored in a chosen conversation waits for the erasure, then finds it gone.
const byVisitorId = statement(
  "privacy_by_visitor_id",
  "SELECT c.id FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id WHERE b.organization_id = $1 AND c.visitor_id = $2 FOR UPDATE OF c",
);
const byEmail = statement(
  "privacy_by_email",
  `SELECT c.id FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id
    WHERE b.organization_id = $1 AND (lower(c.visitor_email) = $2
       OR c.id IN (SELECT conversation_id FROM leads WHERE organization_id = $1 AND lower(email) = $2))
    FOR UPDATE OF c`,
);
const inactive = statement(
  "privacy_inactive",
  "SELECT c.id FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id WHERE b.organization_id = $1 AND c.last_message_at < $2 FOR UPDATE OF c",
);
const deleteDeliveries = statement("privacy_delete_deliveries", "DELETE FROM webhook_deliveries WHERE conversation_id = ANY($1::int[])");
const deleteMessages = statement("privacy_delete_messages", "DELETE FROM messages WHERE conversation_id = ANY($1::int[])");
const deleteLeads = statement("privacy_delete_leads", "DELETE FROM leads WHERE conversation_id = ANY($1::int[])");
const deleteConversations = statement("privacy_delete_conversations", "DELETE FROM conversations WHERE id = ANY($1::int[])");
const insertAudit = statement(
  "privacy_insert_audit",
  "INSERT INTO audit_log (organization_id, action, actor, detail, counts, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
);
const auditOf = statement(
  "privacy_audit",
  `SELECT id, organization_id, action, actor, detail, counts, created_at FROM audit_log
    WHERE ($1::int IS NULL OR organization_id = $1) ORDER BY created_at DESC, id DESC LIMIT $2`,
);

async function remove(tx: Queryable, ids: number[]): Promise<DeletedCounts> {
  return {
    webhook_deliveries: await run(tx, deleteDeliveries, [ids]),
    messages: await run(tx, deleteMessages, [ids]),
    leads: await run(tx, deleteLeads, [ids]),
    conversations: await run(tx, deleteConversations, [ids]),
  };
}

const audit = (tx: Queryable, organizationId: number, entry: NewAuditEntry, counts: DeletedCounts) =>
  run(tx, insertAudit, [organizationId, entry.action, entry.actor, entry.detail, JSON.stringify(counts), entry.created_at]);

const ids = async (tx: Queryable, s: ReturnType<typeof statement>, values: unknown[]) => (await all<{ id: number }>(tx, s, values)).map((r) => r.id);

/** Erasure and retention, each one transaction with its audit row. */
export function createPgPrivacyStore(pool: pg.Pool): PrivacyStore {
  return {
    eraseVisitor: (organizationId, selector, entry) =>
      transaction(pool, async (tx) => {
        const chosen = "visitor_id" in selector ? await ids(tx, byVisitorId, [organizationId, selector.visitor_id]) : await ids(tx, byEmail, [organizationId, selector.email]);
        const counts = await remove(tx, chosen);
        await audit(tx, organizationId, entry, counts);
        return counts;
      }),
    purgeInactive: (organizationId, before, entry) =>
      transaction(pool, async (tx) => {
        const counts = await remove(tx, await ids(tx, inactive, [organizationId, before]));
        if (counts.conversations > 0) await audit(tx, organizationId, entry, counts);
        return counts;
      }),
    audit: ({ organization_id, limit }) => all<AuditRecord>(pool, auditOf, [organization_id, limit]),
  };
}
