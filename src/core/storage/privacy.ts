/** Whose conversations an erasure takes: a visitor id, or an e-mail address (lower-case). */
export type VisitorSelector = { visitor_id: string } | { email: string };

/** Rows an erasure or a retention pass deleted. */
export interface DeletedCounts {
  conversations: number;
  messages: number;
  leads: number;
  /** Webhook outbox rows whose payload was about the deleted conversations. */
  webhook_deliveries: number;
}

export type AuditAction = "visitor_erased" | "retention";

/** An audit row to write with the deletion it records (the organisation is the deletion's). */
export interface NewAuditEntry {
  action: AuditAction;
  /** Who asked: `key sk_live_…` (the key's prefix), `cli …` or `serve (retention)`. */
  actor: string;
  /** JSON text: what was selected, never the erased personal data. */
  detail: string;
  created_at: string;
}

export interface AuditRecord extends NewAuditEntry {
  id: number;
  organization_id: number;
  /** JSON text of {@link DeletedCounts}. */
  counts: string;
}

/**
 * Deleting personal data on request (erasure) or by age (retention), each in
 * one transaction together with its audit row, and reading the audit log.
 */
export interface PrivacyStore {
  /**
   * One transaction: the organisation's conversations of the visitor (by `visitor_id`; by
   * e-mail: the conversation's visitor e-mail or a lead's, case-insensitive) with their
   * messages, leads and webhook outbox rows, and the audit row with the counts.
   */
  eraseVisitor(organizationId: number, selector: VisitorSelector, audit: NewAuditEntry): Promise<DeletedCounts>;
  /**
   * One transaction: the organisation's conversations whose `last_message_at` is before
   * `before`, as {@link eraseVisitor} deletes them; the audit row only when something went.
   */
  purgeInactive(organizationId: number, before: string, audit: NewAuditEntry): Promise<DeletedCounts>;
  /** Newest first, of one organisation or all. */
  audit(filter: { organization_id: number | null; limit: number }): Promise<AuditRecord[]>;
}
