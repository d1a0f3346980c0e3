import { z } from "zod";
import { nowIso } from "./clock.js";
import { ChatsvcError } from "./errors.js";
import type { AuditAction, DeletedCounts, PrivacyStore, VisitorSelector } from "./storage/index.js";
import { email, parse, text } from "./validation.js";

/** Which visitor to erase: exactly one of the two. */
export interface EraseVisitorInput {
  visitor_id?: string;
  email?: string;
}

/** What an erasure deleted. */
export type ErasureResult = DeletedCounts;

/** An audit log entry: what was deleted, how many rows, when and on whose behalf. */
export interface AuditEntry {
  id: number;
  organization_id: number;
  action: AuditAction;
  /** `key sk_live_…` (the API key's prefix), `cli …` or `serve (retention)`. */
  actor: string;
  /** What was selected: `{selector: "visitor_id" | "email"}`, or `{retention_days, cutoff}`. Never the erased data. */
  detail: Record<string, unknown>;
  counts: DeletedCounts;
  created_at: string;
}

export interface AuditQuery {
  /** Only this organisation's entries. */
  organization_id?: number;
  /** At most this many, newest first. Default 100. */
  limit?: number;
}

/** Query of `DELETE /visitors`. */
export const eraseVisitorSchema = z.object(
  {
    visitor_id: text("visitor_id", { min: 1, max: 255 }).optional().meta({ description: "Erase the conversations opened with this `visitor_id`" }),
    email: email("email").optional().meta({ description: "Erase the conversations whose visitor or lead has this e-mail (case-insensitive)" }),
  },
  { error: "The query must be an object." },
);

/** Query of `GET /audit`. */
export const auditQuerySchema = z.object(
  {
    limit: z
      .string({ error: "The limit field must be an integer from 1 to 1000." })
      .regex(/^\d{1,4}$/, { message: "The limit field must be an integer from 1 to 1000." })
      .transform(Number)
      .refine((n) => n >= 1 && n <= 1000, { message: "The limit field must be an integer from 1 to 1000." })
      .meta({ type: "integer", minimum: 1, maximum: 1000, description: "At most this many entries, newest first (default 100)" })
      .optional(),
  },
  { error: "The query must be an object." },
);

export const toAuditEntry = (row: { id: number; organization_id: number; action: AuditAction; actor: string; detail: string; counts: string; created_at: string }): AuditEntry => ({
  id: row.id,
  organization_id: row.organization_id,
  action: row.action,
  actor: row.actor,
  detail: JSON.parse(row.detail) as Record<string, unknown>,
  counts: JSON.parse(row.counts) as DeletedCounts,
  created_at: row.created_at,
});

export type Privacy = ReturnType<typeof createPrivacy>;

/**
 * Visitor erasure (a data subject's request) and the audit log that erasure
 * and retention write.
 *
 * @example
 * await service.privacy.eraseVisitor(orgId, { email: "ana@example.com" }, { actor: "cli visitors erase" });
 * await service.privacy.audit({ organization_id: orgId });
 */
export function createPrivacy(store: PrivacyStore) {
  return {
    /**
     * Deletes, in one transaction, the organisation's conversations of one visitor (by
     * `visitor_id`, or by e-mail: the conversation's visitor e-mail or a lead's) with their
     * messages, leads and webhook outbox rows, and writes an audit row with the counts.
     * Exactly one selector, else 422. Erasing a visitor with nothing stored answers zeros.
     */
    async eraseVisitor(organizationId: number, input: EraseVisitorInput | undefined, { actor }: { actor: string }): Promise<ErasureResult> {
      const q = parse(eraseVisitorSchema, input ?? {});
      if ((q.visitor_id === undefined) === (q.email === undefined)) {
        const message = "Give exactly one of visitor_id or email.";
        throw ChatsvcError.validation({ visitor_id: [message], email: [message] }, message);
      }
      const selector: VisitorSelector = q.visitor_id !== undefined ? { visitor_id: q.visitor_id } : { email: q.email!.trim().toLowerCase() };
      // The audit row says which kind of selector was used, not its value: that is the personal data being erased.
      const detail = JSON.stringify({ selector: "visitor_id" in selector ? "visitor_id" : "email" });
      return store.eraseVisitor(organizationId, selector, { action: "visitor_erased", actor, detail, created_at: nowIso() });
    },

    /** Audit log entries (erasures, retention passes), newest first. */
    async audit({ organization_id, limit = 100 }: AuditQuery = {}): Promise<AuditEntry[]> {
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw ChatsvcError.validation({ limit: ["The limit field must be an integer from 1 to 1000."] });
      return (await store.audit({ organization_id: organization_id ?? null, limit })).map(toAuditEntry);
    },
  };
}
