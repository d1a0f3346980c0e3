import { z } from "zod";
import type { Chatbots } from "./chatbots.js";
import { agentOf, listFilters, toConversationPayload, type ConversationRecord as AccountConversation } from "./conversations.js";
import type { Lead } from "./leads.js";
import type { Source } from "./messages.js";
import { csvRow } from "./csv.js";
import { pageQueryShape } from "./pagination.js";
import type { ConversationStore, ExportedConversation, LeadRecord, LeadStore, ListFilter, MessageRecord } from "./storage/index.js";
import { oneOf, parse } from "./validation.js";

/** Conversations (or leads) read from the database per page of an export: what memory holds at once. */
export const EXPORT_PAGE_SIZE = 200;

export type ExportFormat = "jsonl" | "csv";

export interface ExportQuery {
  format?: ExportFormat;
  /** Chatbot slug of the caller's organisation. */
  chatbot?: string;
  /** ISO date or date-time, inclusive: conversations by `started_at`, leads by `created_at`. */
  since?: string;
  until?: string;
}

/** A checked export, ready to stream: nothing is read from the database before `chunks()` is iterated. */
export interface Export {
  format: ExportFormat;
  /** `application/x-ndjson; charset=utf-8` or `text/csv; charset=utf-8; header=present`. */
  contentType: string;
  /** A file name for `Content-Disposition`, e.g. `conversations-2026-11-25.csv`. */
  filename: string;
  /** The body, one string per page read (bounded), in order. */
  chunks(): AsyncIterable<string>;
}

const { chatbot, since, until } = pageQueryShape;
const format = oneOf("format", ["jsonl", "csv"]);
/** Query of `GET /conversations/export` (format default `jsonl`). */
export const conversationExportSchema = z.object({ format: format.optional(), chatbot, since, until }, { error: "The query must be an object." });
/** Query of `GET /leads/export` (format default `csv`). */
export const leadExportSchema = conversationExportSchema;

const CONTENT_TYPES: Record<ExportFormat, string> = {
  jsonl: "application/x-ndjson; charset=utf-8",
  csv: "text/csv; charset=utf-8; header=present",
};

/** A message in a conversation export: stored content (assistant HTML without the branding element), with its rating. */
export interface ExportedMessage {
  id: number;
  /** `agent`: a person's reply (see human handoff). */
  role: "user" | "assistant" | "agent";
  content: string;
  /** The person who wrote an `agent` message, when named; null otherwise. */
  agent_name: string | null;
  sources: Source[];
  rating: "good" | "bad" | null;
  cannot_answer: boolean;
  created_at: string;
}

/** A line of the JSONL conversation export: the account-level record with the visitor's phone, metadata and messages. */
export interface ConversationExportLine extends AccountConversation {
  visitor_phone: string | null;
  metadata: Record<string, unknown>;
  messages: ExportedMessage[];
}

const toExportedMessage = (m: MessageRecord): ExportedMessage => ({
  id: m.id,
  role: m.role,
  content: m.content,
  agent_name: m.agent_name,
  sources: parseJsonArray(m.sources) as Source[],
  rating: m.rating,
  cannot_answer: m.cannot_answer,
  created_at: m.created_at,
});

/** A JSONL line: the account-level conversation record with its messages. */
const conversationLine = (c: ExportedConversation) =>
  `${JSON.stringify({
    ...toConversationPayload(c),
    visitor_id: c.visitor_id,
    visitor_phone: c.visitor_phone,
    metadata: parseJsonObject(c.metadata),
    is_ended: c.ended_at !== null,
    ended_at: c.ended_at,
    last_message_at: c.last_message_at,
    message_count: c.messages.length,
    handed_off_at: c.handed_off_at,
    handoff_reason: c.handoff_reason,
    messages: c.messages.map(toExportedMessage),
  } satisfies ConversationExportLine)}\n`;

const CONVERSATION_COLUMNS = [
  "conversation_id", "session_id", "chatbot", "visitor_id", "visitor_name", "visitor_email", "visitor_phone", "source", "source_url",
  "started_at", "ended_at", "message_id", "role", "content", "rating", "cannot_answer", "message_created_at",
] as const;

/** CSV rows of a conversation: one per message; a conversation without messages still gets one row. */
const conversationRows = (c: ExportedConversation) => {
  const head = [c.id, c.session_id, c.agent_slug, c.visitor_id, c.visitor_name, c.visitor_email, c.visitor_phone, c.source, c.source_url, c.started_at, c.ended_at];
  if (c.messages.length === 0) return csvRow([...head, null, null, null, null, null, null]);
  return c.messages.map((m) => csvRow([...head, m.id, m.role, m.content, m.rating, m.cannot_answer, m.created_at])).join("");
};

const toExportedLead = (l: LeadRecord): Lead => ({
  id: l.id,
  name: l.name,
  email: l.email,
  phone: l.phone,
  company: l.company,
  message: l.message,
  source: l.source,
  source_url: l.source_url,
  agent: agentOf(l),
  conversation_id: l.conversation_id,
  session_id: l.session_id,
  created_at: l.created_at,
  updated_at: l.updated_at,
});

const LEAD_COLUMNS = ["id", "chatbot", "conversation_id", "session_id", "name", "email", "phone", "company", "message", "source", "source_url", "created_at", "updated_at"] as const;
const leadRow = (l: LeadRecord) =>
  csvRow([l.id, l.agent_slug, l.conversation_id, l.session_id, l.name, l.email, l.phone, l.company, l.message, l.source, l.source_url, l.created_at, l.updated_at]);

async function* formatted<T>(pages: AsyncIterable<T[]>, header: string, line: (row: T) => string): AsyncIterable<string> {
  if (header) yield header;
  for await (const page of pages) yield page.map(line).join("");
}

export type Exports = ReturnType<typeof createExports>;

/**
 * Conversation and lead exports as streams of text. The query is checked
 * when the export is made (a bad one is a 422 before any byte is sent); the
 * database is read page by page as the consumer pulls, so a slow reader holds
 * back the reads and memory holds one page whatever the export's size.
 *
 * @example
 * const exported = await service.exports.conversations(orgId, { format: "csv", chatbot: "demo" });
 * for await (const chunk of exported.chunks()) process.stdout.write(chunk);
 */
export function createExports(stores: { conversations: ConversationStore; leads: LeadStore }, chatbots: Chatbots, { pageSize = EXPORT_PAGE_SIZE } = {}) {
  const prepare = async (organizationId: number, query: ExportQuery | undefined, what: string, fallback: ExportFormat) => {
    const q = parse(conversationExportSchema, query ?? {});
    const filter: ListFilter = await listFilters(chatbots, organizationId, q);
    const chosen = q.format ?? fallback;
    return { filter, format: chosen, contentType: CONTENT_TYPES[chosen], filename: `${what}-${new Date().toISOString().slice(0, 10)}.${chosen}` };
  };

  return {
    /** JSONL (default): one conversation per line with its messages. CSV: one message per row. Oldest first. */
    async conversations(organizationId: number, query?: ExportQuery): Promise<Export> {
      const { filter, ...meta } = await prepare(organizationId, query, "conversations", "jsonl");
      const pages = () => stores.conversations.exportPages(filter, pageSize);
      return {
        ...meta,
        chunks: () => (meta.format === "jsonl" ? formatted(pages(), "", conversationLine) : formatted(pages(), csvRow(CONVERSATION_COLUMNS), conversationRows)),
      };
    },

    /** CSV (default): one lead per row. JSONL: one lead per line, the account-level lead shape. Oldest first. */
    async leads(organizationId: number, query?: ExportQuery): Promise<Export> {
      const { filter, ...meta } = await prepare(organizationId, query, "leads", "csv");
      const pages = () => stores.leads.exportPages(filter, pageSize);
      return {
        ...meta,
        chunks: () => (meta.format === "jsonl" ? formatted(pages(), "", (l) => `${JSON.stringify(toExportedLead(l))}\n`) : formatted(pages(), csvRow(LEAD_COLUMNS), leadRow)),
      };
    },
  };
}

function parseJsonArray(raw: string): unknown[] {
  try {
    const value = JSON.parse(raw) as unknown;
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
}

function parseJsonObject(raw: string): Record<string, unknown> {
  try {
    const value = JSON.parse(raw) as unknown;
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
