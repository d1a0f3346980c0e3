import { z } from "zod";
import type { AuditEntry, ErasureResult } from "../../core/privacy.js";
import { integer, timestamp } from "./common.js";

export const deletedCountsSchema = z
  .strictObject({
    conversations: integer,
    messages: integer,
    leads: integer,
    webhook_deliveries: integer.meta({ description: "Webhook outbox rows about the deleted conversations (pending ones would still have sent their data)" }),
  })
  .meta({ id: "DeletedCounts", description: "Rows deleted, per kind" }) satisfies z.ZodType<ErasureResult>;

export const auditEntrySchema = z
  .strictObject({
    id: integer,
    organization_id: integer,
    action: z.enum(["visitor_erased", "retention"]),
    actor: z.string().meta({ description: "Who asked: `key sk_live_…` (the API key's prefix), `cli …`, or `serve (retention)`" }),
    detail: z.record(z.string(), z.unknown()).meta({ description: "What was selected: `{selector}` for an erasure, `{retention_days, cutoff}` for retention; never the erased data" }),
    counts: deletedCountsSchema,
    created_at: timestamp,
  })
  .meta({ id: "AuditEntry", description: "What an erasure or a retention pass deleted" }) satisfies z.ZodType<AuditEntry>;
