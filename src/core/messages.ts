import { brandingElement, type Branding } from "./branding.js";
import type { ResolvedConfig } from "./config.js";
import type { ConversationStore, MessageRecord } from "./storage/index.js";

/** A knowledge source a reply drew from, or the answer correction that gave the reply. */
export interface Source {
  /** The document's name; for a correction its `source_name`, else its question. */
  name: string;
  /** `file`, `url` or `correction`. */
  type: string;
  /** Relevance in 0..1. */
  score: number;
  /** The correction's id, for `type` `correction`. */
  id?: number;
  /** Set for web pages (a clickable link when `type` is `url`), and for a correction given a `source_url`. */
  url?: string;
  /** A file's title (its first heading), when it has one other than its name. */
  title?: string;
}

/** A message as history shows it. */
export interface Message {
  id: number;
  /** `agent`: a person's reply, sent by an operator while (or after) the conversation was handed to people. */
  role: "user" | "assistant" | "agent";
  /** Plain text for `user` (escape before rendering); sanitised HTML for `assistant` (with branding when required) and `agent` (never branded). */
  content: string;
  /** Only on `agent` messages: the person who wrote it, when the operator named them (else null). */
  agent_name?: string | null;
  sources: Source[];
  created_at: string;
}

/** A message as operators read it (account-level conversation detail): replies carry the visitor's rating. */
export interface RatedMessage extends Message {
  /** Only on `assistant` messages: the visitor's rating, null when not rated. */
  rating?: "good" | "bad" | null;
}

export type Messages = ReturnType<typeof createMessages>;

/**
 * Message presentation. Assistant HTML is stored without the branding
 * element; it is appended whenever a message is read, while the organisation
 * has no brand removal, so buying (or dropping) brand removal applies to old
 * conversations too.
 *
 * @example
 * const messages = createMessages(storage.conversations, config, service.branding);
 * await messages.visible(conversationId, organizationId); // history, oldest first
 */
export function createMessages(store: ConversationStore, config: Pick<ResolvedConfig, "branding">, branding: (organizationId: number) => Promise<Branding>) {
  const element = brandingElement(config.branding);

  /** Assistant HTML as a reader gets it: with the branding element while it is required. */
  const present = (html: string, brandingRequired: boolean): string => (brandingRequired ? `${html}${element}` : html);

  const toMessage = (row: MessageRecord, brandingRequired: boolean): Message => ({
    id: row.id,
    role: row.role,
    // A person's reply is theirs, not the service's: it never carries the branding element.
    content: row.role === "assistant" ? present(row.content, brandingRequired) : row.content,
    ...(row.role === "agent" && { agent_name: row.agent_name }),
    sources: parseSources(row.sources),
    created_at: row.created_at,
  });

  /** Whether the organisation's readers get the branding element. */
  const brandingRequired = async (organizationId: number): Promise<boolean> => (await branding(organizationId)).required;

  return {
    present,
    toMessage,
    brandingRequired,

    /** History, oldest first; regenerated replies are left out. */
    async visible(conversationId: number, organizationId: number): Promise<Message[]> {
      const [rows, required] = await Promise.all([store.messages(conversationId), brandingRequired(organizationId)]);
      return rows.map((row) => toMessage(row, required));
    },

    /** {@link visible}, with each reply's rating: what an operator reads. */
    async rated(conversationId: number, organizationId: number): Promise<RatedMessage[]> {
      const [rows, required] = await Promise.all([store.messages(conversationId), brandingRequired(organizationId)]);
      return rows.map((row) => (row.role === "assistant" ? { ...toMessage(row, required), rating: row.rating } : toMessage(row, required)));
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
