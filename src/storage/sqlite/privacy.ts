import { setTimeout as sleep } from "node:timers/promises";
import type { AuditRecord, DeletedCounts, NewAuditEntry, PrivacyStore, VisitorSelector } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";

// The deleted ids travel as one JSON array parameter: no statement per id, no parameter limit.
const IDS = "(SELECT value FROM json_each(?))";

/**
 * Erasure and retention: pick the conversations, delete what hangs off them
 * (outbox rows, messages, leads) and then them, and write the audit row, in
 * one `BEGIN IMMEDIATE` transaction.
 */
export function createPrivacyStore(sqlite: Sqlite): PrivacyStore {
  const byVisitorId = sqlite
    .prepare<[number, string], number>(
      "SELECT c.id FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id WHERE b.organization_id = ? AND c.visitor_id = ?",
    )
    .pluck();
  const byEmail = sqlite
    .prepare<{ org: number; email: string }, number>(
      `SELECT c.id FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id
        WHERE b.organization_id = @org AND (lower(c.visitor_email) = @email
           OR c.id IN (SELECT conversation_id FROM leads WHERE organization_id = @org AND lower(email) = @email))`,
    )
    .pluck();
  const inactive = sqlite
    .prepare<[number, string], number>(
      "SELECT c.id FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id WHERE b.organization_id = ? AND c.last_message_at < ?",
    )
    .pluck();
  const deleteDeliveries = sqlite.prepare<[string]>(`DELETE FROM webhook_deliveries WHERE conversation_id IN ${IDS}`);
  const deleteMessages = sqlite.prepare<[string]>(`DELETE FROM messages WHERE conversation_id IN ${IDS}`);
  const deleteLeads = sqlite.prepare<[string]>(`DELETE FROM leads WHERE conversation_id IN ${IDS}`);
  const deleteConversations = sqlite.prepare<[string]>(`DELETE FROM conversations WHERE id IN ${IDS}`);
  const insertAudit = sqlite.prepare<[number, string, string, string, string, string]>(
    "INSERT INTO audit_log (organization_id, action, actor, detail, counts, created_at) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const auditOf = sqlite.prepare<{ org: number | null; limit: number }, AuditRecord>(
    "SELECT * FROM audit_log WHERE (@org IS NULL OR organization_id = @org) ORDER BY created_at DESC, id DESC LIMIT @limit",
  );

  const remove = (ids: number[]): DeletedCounts => {
    const list = JSON.stringify(ids);
    return {
      webhook_deliveries: deleteDeliveries.run(list).changes,
      messages: deleteMessages.run(list).changes,
      leads: deleteLeads.run(list).changes,
      conversations: deleteConversations.run(list).changes,
    };
  };
  const audit = (organizationId: number, entry: NewAuditEntry, counts: DeletedCounts) =>
    insertAudit.run(organizationId, entry.action, entry.actor, entry.detail, JSON.stringify(counts), entry.created_at);

  const erase = sqlite.transaction((organizationId: number, selector: VisitorSelector, entry: NewAuditEntry) => {
    const ids = "visitor_id" in selector ? byVisitorId.all(organizationId, selector.visitor_id) : byEmail.all({ org: organizationId, email: selector.email });
    const counts = remove(ids);
    audit(organizationId, entry, counts);
    return counts;
  });
  const purge = sqlite.transaction((organizationId: number, before: string, entry: NewAuditEntry) => {
    const counts = remove(inactive.all(organizationId, before));
    if (counts.conversations > 0) audit(organizationId, entry, counts);
    return counts;
  });

  /**
   * Empties the WAL, whose older frames still hold deleted rows. While another connection checkpoints
   * (the checkpoint worker's during bulk writes, another process's), SQLite answers busy at once without
   * calling the busy handler, so this tries again until the connection's busy timeout has passed; waiting
   * for readers is the busy handler's. Best effort still: a reader in another process that holds its
   * snapshot longer keeps those frames until a later truncating checkpoint.
   */
  const emptyLog = async () => {
    const deadline = performance.now() + (sqlite.pragma("busy_timeout", { simple: true }) as number);
    while ((sqlite.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[])[0]!.busy === 1 && performance.now() < deadline) await sleep(10);
  };

  /**
   * Runs a deletion so that what it deletes is gone from the files too: `secure_delete = ON` zeroes
   * whole freed pages as well (FAST, the connection's mode, skips those), and the log is emptied after.
   */
  const scrubbing = async <T>(run: () => T): Promise<T> => {
    sqlite.pragma("secure_delete = ON");
    let result: T;
    try {
      result = run();
    } finally {
      sqlite.pragma("secure_delete = FAST");
    }
    await emptyLog();
    return result;
  };

  return {
    async eraseVisitor(organizationId, selector, entry) {
      return scrubbing(() => erase.immediate(organizationId, selector, entry));
    },
    async purgeInactive(organizationId, before, entry) {
      return scrubbing(() => purge.immediate(organizationId, before, entry));
    },
    async audit({ organization_id, limit }) {
      return auditOf.all({ org: organization_id, limit });
    },
  };
}
