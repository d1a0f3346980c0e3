import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Chatbot, Chatbots } from "./chatbots.js";
import { nowIso } from "./clock.js";
import { ChatsvcError } from "./errors.js";
import type { AgentRef, ConversationEndedPayload, ConversationPayload, EventBus } from "./events.js";
import type { Message, Messages } from "./messages.js";
import { checkRange, DEFAULT_PER_PAGE, pageMeta, pageQueryShape, type Page, type PageQuery } from "./pagination.js";
import type { ConversationRecord as StoredConversation, ConversationStore, EndedRecord, ListFilter } from "./storage/index.js";
import { body, containsNul, email, noNul, oneOf, parse, text } from "./validation.js";

/**
 * Facts about the visitor's request that the HTTP layer (or an embedding app)
 * knows and the service does not: they end up in the conversation record and
 * webhook payloads.
 */
export interface VisitorContext {
  /** Client IP address. */
  ip?: string | null;
  /** Two-letter country code. */
  country?: string | null;
  /** Page the chat runs on. */
  sourceUrl?: string | null;
  /** Channel the conversation came through; also the `session_id` prefix. Default `api`. */
  source?: "api" | "widget";
}

export interface StartConversationInput {
  visitor_id?: string | null;
  visitor_name?: string | null;
  visitor_email?: string | null;
  visitor_phone?: string | null;
  metadata?: Record<string, unknown> | null;
}

/** `POST /chatbots/{slug}/conversations` data. */
export interface StartedConversation {
  conversation_id: number;
  session_id: string;
  visitor_id: string | null;
  started_at: string;
  is_ended: boolean;
}

/** `GET /chatbots/{slug}/conversations/{id}` data. */
export interface ConversationHistory {
  id: number;
  visitor_id: string | null;
  visitor_name: string | null;
  visitor_email: string | null;
  is_ended: boolean;
  source: string;
  started_at: string;
  last_message_at: string;
  ended_at: string | null;
  message_count: number;
  messages: Message[];
}

/** A conversation as the account-level endpoints list it: the webhook shape plus state. */
export interface ConversationRecord extends ConversationPayload {
  visitor_id: string | null;
  is_ended: boolean;
  ended_at: string | null;
  last_message_at: string;
  message_count: number;
}

export interface ConversationDetail extends ConversationRecord {
  messages: Message[];
}

/** What ending a conversation answers. */
export interface EndedConversation {
  message: string;
  conversation_id: number;
  ended_at: string;
  duration_seconds: number;
  message_count: number;
}

export interface ConversationListQuery extends PageQuery {
  status?: "active" | "ended";
}

/** A stored conversation with the chatbot facts every payload needs. */
export type ConversationRow = StoredConversation;

const METADATA_MAX_BYTES = 16 * 1024;

// Forms often send "" for a field left empty: that means absent, not an invalid value.
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === "" ? null : v), schema.nullish());

/** Body of the start-conversation endpoint (all optional). */
export const startSchema = body({
  visitor_id: optional(text("visitor_id", { max: 255 })),
  visitor_name: optional(text("visitor_name", { max: 255 })),
  visitor_email: optional(email("visitor_email")),
  visitor_phone: optional(text("visitor_phone", { max: 50 })),
  metadata: z
    .record(z.string(), z.unknown(), { error: "The metadata field must be an object." })
    .refine((m) => !containsNul(m), { message: noNul("metadata"), abort: true })
    .refine((m) => Buffer.byteLength(JSON.stringify(m)) <= METADATA_MAX_BYTES, {
      message: `The metadata field must not be larger than ${METADATA_MAX_BYTES} bytes as JSON.`,
    })
    .nullish(),
});

/** Query of `GET /conversations`. */
export const listSchema = z.object(
  { ...pageQueryShape, status: oneOf("status", ["active", "ended"]).optional() },
  { error: "The query must be an object." },
);

export const agentOf = (row: Pick<ConversationRow, "chatbot_id" | "agent_name" | "agent_slug">): AgentRef => ({
  id: row.chatbot_id,
  name: row.agent_name,
  slug: row.agent_slug,
});

/** The spec's conversation webhook shape (`conversation_started` data). */
export function toConversationPayload(row: ConversationRow): ConversationPayload {
  return {
    id: row.id,
    session_id: row.session_id,
    status: row.ended_at === null ? "active" : "ended",
    source: row.source,
    source_url: row.source_url,
    agent: agentOf(row),
    visitor: { name: row.visitor_name, email: row.visitor_email, ip: row.ip, country: row.country },
    started_at: row.started_at,
    created_at: row.started_at,
  };
}

export type Conversations = ReturnType<typeof createConversations>;

export interface ConversationsDeps {
  chatbots: Chatbots;
  messages: Messages;
  events: EventBus;
}

const toRecord = (row: ConversationRow, messageCount: number): ConversationRecord => ({
  ...toConversationPayload(row),
  visitor_id: row.visitor_id,
  is_ended: row.ended_at !== null,
  ended_at: row.ended_at,
  last_message_at: row.last_message_at,
  message_count: messageCount,
});

const toEnded = ({ conversation: row, message_count }: Omit<EndedRecord, "closed_here">): EndedConversation => ({
  message: "Conversation ended",
  conversation_id: row.id,
  ended_at: row.ended_at,
  duration_seconds: Math.max(0, Math.floor((Date.parse(row.ended_at) - Date.parse(row.started_at)) / 1000)),
  message_count,
});

/**
 * Conversations: opening, reading, ending and listing them, with the status
 * rules of DESIGN.md (slug 403, conversation of another chatbot 404 on chatbot
 * endpoints; another organisation's record 403, unknown 404 at account level).
 *
 * @example
 * const started = await service.conversations.start(orgId, "demo", { visitor_id: "v1" }, { ip: "192.0.2.1" });
 * await service.conversations.end(orgId, "demo", started.conversation_id);
 */
export function createConversations(store: ConversationStore, { chatbots, messages, events }: ConversationsDeps) {
  /** The conversation `id` of chatbot `bot`, or the chatbot endpoints' 404. */
  const ofChatbot = async (bot: Chatbot, id: number): Promise<ConversationRow> => {
    const row = await store.find(id);
    if (!row || row.chatbot_id !== bot.id) throw ChatsvcError.notFound("Conversation not found");
    return row;
  };

  /** The conversation `id` of the organisation: 404 unknown, 403 another organisation's. */
  const ofOrganization = async (organizationId: number, id: number): Promise<ConversationRow> => {
    const row = await store.find(id);
    if (!row) throw ChatsvcError.notFound("Conversation not found");
    if (row.organization_id !== organizationId) throw ChatsvcError.forbidden("You do not have access to this conversation");
    return row;
  };

  /** Ends the conversation with its event, in one write; `closed_here` is false when a concurrent request ended it first. */
  const close = async (row: ConversationRow): Promise<EndedRecord> => {
    const ended = await store.end(row.id, nowIso(), (e) => {
      const figures = toEnded(e);
      const data: ConversationEndedPayload = {
        ...toConversationPayload(e.conversation),
        status: "ended",
        ended_at: e.conversation.ended_at,
        duration_seconds: figures.duration_seconds,
        message_count: figures.message_count,
      };
      return { name: "conversation_ended", organizationId: row.organization_id, data };
    });
    if (!ended) throw ChatsvcError.notFound("Conversation not found");
    events.publish(ended.events);
    return ended.result;
  };

  return {
    ofChatbot,
    ofOrganization,

    /** Opens a conversation with an active chatbot and fires `conversation_started`. */
    async start(organizationId: number, slug: string, input: StartConversationInput | undefined, context: VisitorContext = {}): Promise<StartedConversation> {
      const bot = await chatbots.resolveActive(organizationId, slug);
      const data = parse(startSchema, input ?? {});
      const now = nowIso();
      const source = context.source ?? "api";
      const { result: row, events: recorded } = await store.start(
        {
          chatbot_id: bot.id,
          session_id: `${source}_${randomBytes(24).toString("base64url")}`,
          visitor_id: data.visitor_id ?? null,
          visitor_name: data.visitor_name ?? null,
          visitor_email: data.visitor_email ?? null,
          visitor_phone: data.visitor_phone ?? null,
          metadata: JSON.stringify(data.metadata ?? {}),
          source,
          source_url: context.sourceUrl ?? null,
          ip: context.ip ?? null,
          country: context.country ?? null,
          started_at: now,
          last_message_at: now,
          ended_at: null,
          organization_id: bot.organization_id,
          agent_name: bot.name,
          agent_slug: bot.slug,
        },
        (created) => ({ name: "conversation_started", organizationId, data: toConversationPayload(created) }),
      );
      events.publish(recorded);
      return { conversation_id: row.id, session_id: row.session_id, visitor_id: row.visitor_id, started_at: row.started_at, is_ended: false };
    },

    /** Full history as the chatbot endpoint shows it. */
    async history(organizationId: number, slug: string, id: number): Promise<ConversationHistory> {
      const row = await ofChatbot(await chatbots.resolve(organizationId, slug), id);
      const list = await messages.visible(row.id, organizationId);
      return {
        id: row.id,
        visitor_id: row.visitor_id,
        visitor_name: row.visitor_name,
        visitor_email: row.visitor_email,
        is_ended: row.ended_at !== null,
        source: row.source,
        started_at: row.started_at,
        last_message_at: row.last_message_at,
        ended_at: row.ended_at,
        message_count: list.length,
        messages: list,
      };
    },

    /** Chatbot endpoint: ends the conversation; repeating it answers the same figures. */
    async end(organizationId: number, slug: string, id: number): Promise<EndedConversation> {
      const row = await ofChatbot(await chatbots.resolve(organizationId, slug), id);
      if (row.ended_at === null) return toEnded(await close(row));
      return toEnded({ conversation: row as ConversationRow & { ended_at: string }, message_count: await store.countMessages(row.id) });
    },

    /** Account level: ends the conversation; 400 when it has already ended. */
    async endById(organizationId: number, id: number): Promise<EndedConversation> {
      const row = await ofOrganization(organizationId, id);
      if (row.ended_at !== null) throw ChatsvcError.badRequest("Conversation has already ended");
      const ended = await close(row);
      if (!ended.closed_here) throw ChatsvcError.badRequest("Conversation has already ended");
      return toEnded(ended);
    },

    /** Account level: one conversation with its messages. */
    async get(organizationId: number, id: number): Promise<ConversationDetail> {
      const row = await ofOrganization(organizationId, id);
      const list = await messages.visible(row.id, organizationId);
      return { ...toRecord(row, list.length), messages: list };
    },

    /** Account level: conversations of the organisation, newest first. */
    async list(organizationId: number, query: ConversationListQuery = {}): Promise<Page<ConversationRecord>> {
      const q = parse(listSchema, query);
      const filter = { ...(await listFilters(chatbots, organizationId, q)), status: q.status ?? null };
      const { page = 1, per_page: perPage = DEFAULT_PER_PAGE } = q;
      const { total, rows } = await store.page(filter, { limit: perPage, offset: (page - 1) * perPage });
      return { data: rows.map((row) => toRecord(row, row.message_count)), meta: pageMeta({ page, perPage, total, count: rows.length }) };
    },
  };
}

/**
 * The filters the account-level lists share, checked: the organisation, the
 * chatbot id of a `chatbot` slug (another organisation's slug is as unknown as
 * a missing one), and a `since`..`until` range that is not reversed.
 */
export async function listFilters(chatbots: Chatbots, organizationId: number, q: { chatbot?: string; since?: string; until?: string }): Promise<ListFilter> {
  checkRange(q);
  let chatbot: number | null = null;
  if (q.chatbot !== undefined) {
    const bot = await chatbots.find(q.chatbot);
    if (!bot || bot.organization_id !== organizationId) {
      throw ChatsvcError.validation({ chatbot: ["The chatbot field must be the slug of one of your chatbots."] });
    }
    chatbot = bot.id;
  }
  return { organization_id: organizationId, chatbot_id: chatbot, since: q.since ?? null, until: q.until ?? null };
}
