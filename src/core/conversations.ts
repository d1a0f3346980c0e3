import { z } from "zod";
import type { Chatbot, Chatbots } from "./chatbots.js";
import { nowIso } from "./clock.js";
import { ChatsvcError } from "./errors.js";
import type { AgentRef, ConversationEndedPayload, ConversationPayload, EventBus, EventName } from "./events.js";
import type { Message, Messages, RatedMessage } from "./messages.js";
import { checkRange, DEFAULT_PER_PAGE, pageMeta, pageQueryShape, type Page, type PageQuery } from "./pagination.js";
import { timeSortedId } from "./sorted-ids.js";
import type { ConversationRecord as StoredConversation, ConversationRef, ConversationStore, EndedRecord, HandlingChange, ListFilter, RecordedEvent, TurnRefusal } from "./storage/index.js";
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
  /** `active` (the bot answers), `human` (a person answers; the bot stays silent) or `ended`. */
  status: ConversationStatus;
  source: string;
  started_at: string;
  last_message_at: string;
  ended_at: string | null;
  message_count: number;
  messages: Message[];
}

export type ConversationStatus = ConversationPayload["status"];

/** A conversation as the account-level endpoints list it: the webhook shape plus state. */
export interface ConversationRecord extends ConversationPayload {
  visitor_id: string | null;
  is_ended: boolean;
  ended_at: string | null;
  last_message_at: string;
  message_count: number;
  /** The first time the conversation went to a person (operator takeover or visitor request); never cleared. */
  handed_off_at: string | null;
  /** Why it went to a person the last time, when someone said. */
  handoff_reason: string | null;
}

export interface ConversationDetail extends ConversationRecord {
  messages: RatedMessage[];
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
  status?: ConversationStatus;
  /** `good` or `bad`: a reply of the conversation was rated so; `unrated`: none of its replies is rated. */
  rating?: "good" | "bad" | "unrated";
  /** Words in a message of the conversation (visitor's or reply), case-insensitive. */
  q?: string;
}

export interface HandoffInput {
  /** Why the conversation goes to a person (shown to operators, sent in `handoff_requested`). */
  reason?: string | null;
}

/** What a visitor's request for a person answers (chatbot API). */
export interface HandoffRequested {
  conversation_id: number;
  status: "human";
  handed_off_at: string;
  /** One entry per event fired: empty when the conversation was already with a person. */
  actions: { type: "webhook"; event: EventName; deliveries: number }[];
}

/** How a visitor's request for a person was made. */
export interface HandoffRequestOptions {
  /** The widget asks only for chatbots whose `handoff_enabled` is on (the API key's owner may always ask). */
  requireEnabled?: boolean;
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

/** Body of the handoff endpoints (optional). */
export const handoffSchema = body({ reason: optional(text("reason", { max: 1000 })) });

/** Query of `GET /conversations`. */
export const listSchema = z.object(
  {
    ...pageQueryShape,
    status: oneOf("status", ["active", "human", "ended"]).optional(),
    rating: oneOf("rating", ["good", "bad", "unrated"])
      .meta({ description: "`good` or `bad`: a visible reply of the conversation was rated so; `unrated`: none of its visible replies is rated" })
      .optional(),
    q: text("q", { min: 1, max: 200 }).meta({ description: "Text in a visible message of the conversation (visitor's or reply), case-insensitive" }).optional(),
  },
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
    status: statusOf(row),
    source: row.source,
    source_url: row.source_url,
    agent: agentOf(row),
    visitor: { name: row.visitor_name, email: row.visitor_email, ip: row.ip, country: row.country },
    started_at: row.started_at,
    created_at: row.started_at,
  };
}

/** `ended` once ended, else who answers: `human` or `active` (the bot). */
export const statusOf = (row: Pick<ConversationRow, "ended_at" | "handling">): ConversationStatus =>
  row.ended_at !== null ? "ended" : row.handling === "human" ? "human" : "active";

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
  handed_off_at: row.handed_off_at,
  handoff_reason: row.handoff_reason,
});

const ended = () => ChatsvcError.badRequest("Conversation has already ended");

/** The error for a handling change the storage refused after re-checking inside its transaction. */
const handlingRefusal = (refused: TurnRefusal): ChatsvcError => (refused.refused === "ended" ? ended() : ChatsvcError.notFound("Conversation not found"));

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

  /** Account level: moves the conversation to `handling` (idempotent); 400 once ended. */
  const setHandlingById = async (organizationId: number, id: number, change: Omit<HandlingChange, "at">): Promise<ConversationRecord> => {
    const row = await ofOrganization(organizationId, id);
    if (row.ended_at !== null) throw ended();
    const ref: ConversationRef = { id: row.id, organization_id: organizationId };
    const changed = await store.setHandling(ref, { ...change, at: nowIso() });
    if ("refused" in changed) throw handlingRefusal(changed);
    return toRecord(changed.result.conversation, await store.countMessages(row.id));
  };

  return {
    ofChatbot,
    ofOrganization,

    /** For owners (CLI): the organisation a conversation belongs to; 404 when it does not exist. */
    async organizationOf(id: number): Promise<number> {
      const row = await store.find(id);
      if (!row) throw ChatsvcError.notFound("Conversation not found");
      return row.organization_id;
    },

    /** Opens a conversation with an active chatbot and fires `conversation_started`. */
    async start(organizationId: number, slug: string, input: StartConversationInput | undefined, context: VisitorContext = {}): Promise<StartedConversation> {
      const bot = await chatbots.resolveActive(organizationId, slug);
      const data = parse(startSchema, input ?? {});
      const now = nowIso();
      const source = context.source ?? "api";
      const { result: row, events: recorded } = await store.start(
        {
          chatbot_id: bot.id,
          session_id: `${source}_${timeSortedId(24, "base64url")}`,
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
        status: statusOf(row),
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
      if (row.ended_at !== null) throw ended();
      const closed = await close(row);
      if (!closed.closed_here) throw ended();
      return toEnded(closed);
    },

    /**
     * Account level: a person takes the conversation over (`status: "human"`): the
     * bot stops answering until {@link release}. Idempotent; 400 once ended.
     * `handed_off_at` is set the first time only.
     */
    async handOff(organizationId: number, id: number, input?: HandoffInput): Promise<ConversationRecord> {
      const { reason } = parse(handoffSchema, input ?? {});
      return setHandlingById(organizationId, id, { handling: "human", reason: reason ?? null });
    },

    /** Account level: gives the conversation back to the bot (`status: "active"`). Idempotent; 400 once ended. */
    async release(organizationId: number, id: number): Promise<ConversationRecord> {
      return setHandlingById(organizationId, id, { handling: "bot" });
    },

    /**
     * Chatbot endpoints: the visitor asks for a person. The conversation goes to
     * people (`status: "human"`: the bot stays silent until an operator releases
     * it) and `handoff_requested` fires, once per change: asking again while a
     * person has it answers the same state and fires nothing.
     */
    async requestHandoff(organizationId: number, slug: string, id: number, input?: HandoffInput, { requireEnabled = false }: HandoffRequestOptions = {}): Promise<HandoffRequested> {
      const bot = await chatbots.resolveActive(organizationId, slug);
      const row = await ofChatbot(bot, id);
      if (requireEnabled && !bot.handoff_enabled) throw ChatsvcError.forbidden("This chatbot does not offer a person to talk to");
      const { reason } = parse(handoffSchema, input ?? {});
      if (row.ended_at !== null) throw ended();
      const requestedAt = nowIso();
      const changed = await store.setHandling({ id: row.id, chatbot_id: bot.id }, { handling: "human", reason: reason ?? null, at: requestedAt }, (fresh) => ({
        name: "handoff_requested",
        organizationId,
        data: { ...toConversationPayload(fresh), status: "human", visitor_id: fresh.visitor_id, reason: reason ?? null, handed_off_at: fresh.handed_off_at ?? requestedAt, requested_at: requestedAt },
      }));
      if ("refused" in changed) throw handlingRefusal(changed);
      events.publish(changed.events);
      const fresh = changed.result.conversation;
      return { conversation_id: fresh.id, status: "human", handed_off_at: fresh.handed_off_at ?? requestedAt, actions: toActions(changed.events) };
    },

    /** Account level: one conversation with its messages. */
    async get(organizationId: number, id: number): Promise<ConversationDetail> {
      const row = await ofOrganization(organizationId, id);
      const list = await messages.rated(row.id, organizationId);
      return { ...toRecord(row, list.length), messages: list };
    },

    /** Account level: conversations of the organisation, newest first. */
    async list(organizationId: number, query: ConversationListQuery = {}): Promise<Page<ConversationRecord>> {
      const q = parse(listSchema, query);
      const filter = { ...(await listFilters(chatbots, organizationId, q)), status: q.status ?? null, rating: q.rating ?? null, text: q.q?.trim() || null };
      const { page = 1, per_page: perPage = DEFAULT_PER_PAGE } = q;
      const { total, rows } = await store.page(filter, { limit: perPage, offset: (page - 1) * perPage });
      return { data: rows.map((row) => toRecord(row, row.message_count)), meta: pageMeta({ page, perPage, total, count: rows.length }) };
    },
  };
}

const toActions = (recorded: RecordedEvent[]): HandoffRequested["actions"] => recorded.map(({ event, deliveries }) => ({ type: "webhook", event: event.name, deliveries }));

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
