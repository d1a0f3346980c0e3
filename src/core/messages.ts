import type { ResolvedConfig } from "../config.js";
import type { RetrievedChunk } from "../knowledge/types.js";
import type { PromptMessage } from "../models/types.js";
import { brandingElement, toPlainText, type Branding } from "./branding.js";
import type { Db } from "./db/open.js";

/** A knowledge source a reply drew from. */
export interface Source {
  name: string;
  /** `file` or `url`. */
  type: string;
  /** Relevance in 0..1. */
  score: number;
  /** Set for web pages; a clickable link when `type` is `url`. */
  url?: string;
  /** A file's title (its first heading), when it has one other than its name. */
  title?: string;
}

/** A message as history shows it. */
export interface Message {
  id: number;
  role: "user" | "assistant";
  /** Plain text for `user` (escape before rendering); sanitised HTML for `assistant`, with branding when required. */
  content: string;
  sources: Source[];
  created_at: string;
}

/** A stored message row (assistant content without branding). */
export interface MessageRow {
  id: number;
  conversation_id: number;
  role: "user" | "assistant";
  content: string;
  sources: string;
  model: string | null;
  response_ms: number | null;
  rating: "good" | "bad" | null;
  regenerated: number;
  cannot_answer: number;
  created_at: string;
}

export interface NewMessage {
  conversationId: number;
  role: "user" | "assistant";
  content: string;
  sources?: Source[];
  model?: string | null;
  responseMs?: number | null;
  cannotAnswer?: boolean;
  createdAt: string;
}

/** One source per document, with its best chunk's score: the shape replies and history carry. */
export function toSources(chunks: RetrievedChunk[]): Source[] {
  const byDocument = new Map<number, Source>();
  for (const c of chunks) {
    const score = Math.round(c.score * 10_000) / 10_000;
    const seen = byDocument.get(c.document_id);
    if (seen) seen.score = Math.max(seen.score, score);
    else byDocument.set(c.document_id, { name: c.name, type: c.type, score, ...(c.url ? { url: c.url } : {}), ...(c.title ? { title: c.title } : {}) });
  }
  return [...byDocument.values()];
}

export type Messages = ReturnType<typeof createMessages>;

/**
 * Message storage and presentation. Assistant HTML is stored without the
 * branding element; it is appended whenever a message is read, while the
 * organisation has no brand removal, so buying (or dropping) brand removal
 * applies to old conversations too.
 *
 * @example
 * const messages = createMessages(db, config, service.branding);
 * messages.visible(conversationId, organizationId); // history, oldest first
 */
export function createMessages(db: Db, config: ResolvedConfig, branding: (organizationId: number) => Branding) {
  const sqlite = db.$client;
  const element = brandingElement(config.branding);
  const visibleRows = sqlite.prepare<[number], MessageRow>("SELECT * FROM messages WHERE conversation_id = ? AND regenerated = 0 ORDER BY id");
  const countVisible = sqlite.prepare<[number], { n: number }>("SELECT COUNT(*) AS n FROM messages WHERE conversation_id = ? AND regenerated = 0");
  const byId = sqlite.prepare<[number, number], MessageRow>("SELECT * FROM messages WHERE id = ? AND conversation_id = ?");
  const lastAssistant = sqlite.prepare<[number], { id: number }>(
    "SELECT id FROM messages WHERE conversation_id = ? AND role = 'assistant' AND regenerated = 0 ORDER BY id DESC LIMIT 1",
  );
  const insert = sqlite.prepare(
    `INSERT INTO messages (conversation_id, role, content, sources, model, response_ms, cannot_answer, created_at)
     VALUES (@conversationId, @role, @content, @sources, @model, @responseMs, @cannotAnswer, @createdAt) RETURNING *`,
  );
  const setRating = sqlite.prepare<[string, number]>("UPDATE messages SET rating = ? WHERE id = ?");
  const flagRegenerated = sqlite.prepare<[number]>("UPDATE messages SET regenerated = 1 WHERE id = ?");

  /** Assistant HTML as a reader gets it: with the branding element while it is required. */
  const present = (html: string, organizationId: number): string => (branding(organizationId).required ? `${html}${element}` : html);

  const toMessage = (row: MessageRow, organizationId: number): Message => ({
    id: row.id,
    role: row.role,
    content: row.role === "assistant" ? present(row.content, organizationId) : row.content,
    sources: parseSources(row.sources),
    created_at: row.created_at,
  });

  return {
    present,
    toMessage,

    /** History, oldest first; regenerated replies are left out. */
    visible(conversationId: number, organizationId: number): Message[] {
      return visibleRows.all(conversationId).map((row) => toMessage(row, organizationId));
    },

    count(conversationId: number): number {
      return countVisible.get(conversationId)!.n;
    },

    /** Earlier turns as a model sees them: plain text, regenerated replies left out. */
    promptHistory(conversationId: number, beforeId = Number.MAX_SAFE_INTEGER): PromptMessage[] {
      return visibleRows
        .all(conversationId)
        .filter((row) => row.id < beforeId)
        .map((row) => ({ role: row.role, content: row.role === "assistant" ? toPlainText(row.content) : row.content }));
    },

    find(conversationId: number, messageId: number): MessageRow | undefined {
      return byId.get(messageId, conversationId);
    },

    latestAssistantId(conversationId: number): number | undefined {
      return lastAssistant.get(conversationId)?.id;
    },

    /** Call inside a write transaction. */
    insert(message: NewMessage): MessageRow {
      return insert.get({
        conversationId: message.conversationId,
        role: message.role,
        content: message.content,
        sources: JSON.stringify(message.sources ?? []),
        model: message.model ?? null,
        responseMs: message.responseMs ?? null,
        cannotAnswer: message.cannotAnswer ? 1 : 0,
        createdAt: message.createdAt,
      }) as MessageRow;
    },

    rate(messageId: number, rating: "good" | "bad"): void {
      setRating.run(rating, messageId);
    },

    /** Call inside a write transaction. */
    flagRegenerated(messageId: number): void {
      flagRegenerated.run(messageId);
    },
  };
}

function parseSources(raw: string): Source[] {
  try {
    const value = JSON.parse(raw) as unknown;
    return Array.isArray(value) ? (value as Source[]) : [];
  } catch {
    return [];
  }
}
