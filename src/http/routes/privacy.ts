import { z } from "zod";
import { conversationExportSchema, leadExportSchema } from "../../core/exports.js";
import { auditQuerySchema, eraseVisitorSchema } from "../../core/privacy.js";
import { parse } from "../../core/validation.js";
import { streamExport } from "../download.js";
import { ok } from "../envelope.js";
import { auditEntrySchema, deletedCountsSchema } from "../schemas/index.js";
import type { RouteDefinition } from "../router.js";
import { listQuery } from "./conversations.js";

const EXPORT_FILTERS = ["format", "chatbot", "since", "until"];
const STREAMED =
  "Streamed as it is read (page by page, with backpressure), so exports of any size use bounded memory on the server; oldest first. " +
  "A failure mid-way aborts the response (no clean end of the chunked body), so a truncated file is never mistaken for a complete one. " +
  "`since`/`until` (inclusive) filter";
const CSV_NOTE =
  "CSV is RFC 4180 (header row, CRLF, fields with commas, quotes or line breaks quoted); cells starting with `=`, `+`, `-`, `@`, tab or CR get a leading `'` so spreadsheets do not run them as formulas.";

export const privacyRoutes: RouteDefinition[] = [
  {
    method: "GET",
    path: "/conversations/export",
    operationId: "exportConversations",
    tags: ["Privacy"],
    summary: "Export conversations with their messages (JSONL or CSV)",
    description: `${STREAMED} on \`started_at\`. JSONL (default): one conversation per line, the account-level conversation record plus \`visitor_phone\`, \`metadata\` and \`messages\` (stored content: assistant HTML without the branding element, with \`rating\` and \`cannot_answer\`). CSV: one message per row, a conversation without messages as one row with empty message columns. ${CSV_NOTE}`,
    query: conversationExportSchema,
    response: {
      data: z.never(),
      download: {
        "application/x-ndjson": "One JSON object per line: a conversation with `messages`",
        "text/csv": "Header row, then one row per message",
      },
    },
    handler: async ({ event, service, principal, query }) =>
      streamExport(event, await service.exports.conversations(principal.organizationId, listQuery(query, EXPORT_FILTERS) as never)),
  },
  {
    method: "GET",
    path: "/leads/export",
    operationId: "exportLeads",
    tags: ["Privacy"],
    summary: "Export leads (CSV or JSONL)",
    description: `${STREAMED} on \`created_at\`. CSV (default): one lead per row. JSONL: one lead per line, the account-level lead shape. ${CSV_NOTE}`,
    query: leadExportSchema,
    response: {
      data: z.never(),
      download: { "text/csv": "Header row, then one row per lead", "application/x-ndjson": "One JSON lead per line" },
    },
    handler: async ({ event, service, principal, query }) =>
      streamExport(event, await service.exports.leads(principal.organizationId, listQuery(query, EXPORT_FILTERS) as never)),
  },
  {
    method: "DELETE",
    path: "/visitors",
    operationId: "eraseVisitor",
    tags: ["Privacy"],
    summary: "Erase a visitor's conversations, messages, leads and pending webhook payloads",
    description:
      "Exactly one of `visitor_id` or `email` (else 422). Deletes, in one transaction, your organisation's conversations opened with that `visitor_id`, or (by `email`, case-insensitive) " +
      "those whose visitor e-mail or a lead's e-mail is it, with their messages, leads and webhook outbox rows (pending deliveries that would still send the data, and finished ones holding a copy), " +
      "and answers the counts. Other organisations' data is never touched. Nothing found is a 200 with zeros. Writes an audit row (the selector's kind, the counts, the key's prefix; not the value).",
    query: eraseVisitorSchema,
    response: { data: deletedCountsSchema },
    handler: async ({ service, principal, query }) =>
      ok(await service.privacy.eraseVisitor(principal.organizationId, listQuery(query, ["visitor_id", "email"]), { actor: `key ${principal.keyPrefix}` })),
  },
  {
    method: "GET",
    path: "/audit",
    operationId: "listAudit",
    tags: ["Privacy"],
    summary: "The audit log of erasures and retention passes, newest first",
    query: auditQuerySchema,
    response: { data: z.array(auditEntrySchema) },
    handler: async ({ service, principal, query }) => {
      const { limit } = parse(auditQuerySchema, listQuery(query, ["limit"]));
      return ok(await service.privacy.audit({ organization_id: principal.organizationId, ...(limit !== undefined && { limit }) }));
    },
  },
];
