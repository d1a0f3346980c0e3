import type { Charge, CreditRecord } from "./credits.js";
import type { EventOf, WithEvents } from "./events.js";

export type Handling = "bot" | "human";

/** A stored conversation with the chatbot facts every payload needs. */
export interface ConversationRecord {
  id: number;
  chatbot_id: number;
  session_id: string;
  visitor_id: string | null;
  visitor_name: string | null;
  visitor_email: string | null;
  visitor_phone: string | null;
  /** JSON text. */
  metadata: string;
  source: string;
  source_url: string | null;
  ip: string | null;
  country: string | null;
  started_at: string;
  last_message_at: string;
  ended_at: string | null;
  /** Who answers visitors: the bot, or a person (the bot stays silent). */
  handling: Handling;
  /** The first time the conversation went to a person; never cleared. */
  handed_off_at: string | null;
  /** Why it went to a person the last time, when someone said. */
  handoff_reason: string | null;
  organization_id: number;
  agent_name: string;
  agent_slug: string;
}

/** A new conversation: the bot answers it, nobody has handed it off yet. */
export type NewConversation = Omit<ConversationRecord, "id" | "handling" | "handed_off_at" | "handoff_reason">;

/** A stored message (assistant content without branding; `sources` JSON text). */
export interface MessageRecord {
  id: number;
  conversation_id: number;
  /** `agent`: a person's reply (an operator's), rendered like `assistant` content. */
  role: "user" | "assistant" | "agent";
  content: string;
  sources: string;
  model: string | null;
  response_ms: number | null;
  rating: "good" | "bad" | null;
  regenerated: boolean;
  cannot_answer: boolean;
  /** Who wrote an `agent` message, when the operator named them. */
  agent_name: string | null;
  created_at: string;
}

export type NewMessage = Pick<MessageRecord, "role" | "content" | "created_at"> &
  Partial<Pick<MessageRecord, "sources" | "model" | "response_ms" | "cannot_answer" | "agent_name">>;

/** Filters of the account-level lists (conversations, leads). */
export interface ListFilter {
  organization_id: number;
  chatbot_id: number | null;
  /** ISO times, inclusive. */
  since: string | null;
  until: string | null;
}

export interface ConversationFilter extends ListFilter {
  /** `active` (open, the bot answers), `human` (open, a person answers) or `ended`. */
  status: "active" | "human" | "ended" | null;
  /** `good`/`bad`: a visible reply was rated so; `unrated`: no visible reply is rated. */
  rating?: "good" | "bad" | "unrated" | null;
  /** Text a visible message contains, case-insensitive (ASCII case folding on SQLite). */
  text?: string | null;
}

/** A conversation with its visible messages (oldest first), as exports carry it. */
export interface ExportedConversation extends ConversationRecord {
  messages: MessageRecord[];
}

export interface PageRequest {
  limit: number;
  offset: number;
}

export interface PageOf<T> {
  total: number;
  rows: T[];
}

/** Why a write of a turn stored nothing. */
export type TurnRefusal =
  /** The caller gave up before the transaction began (its signal aborted). */
  | { refused: "aborted" }
  /** The conversation is gone or no longer belongs to the chatbot / organisation. */
  | { refused: "missing" }
  | { refused: "ended" }
  /** Another reply became the latest meanwhile (regenerate only). */
  | { refused: "not-latest" }
  | { refused: "credits"; credits: CreditRecord };

/** Which conversation a write addresses, re-checked inside its transaction. */
export interface ConversationRef {
  id: number;
  /** The conversation must belong to this chatbot (chatbot endpoints) ... */
  chatbot_id?: number;
  /** ... or to this organisation (account-level endpoints). */
  organization_id?: number;
  /** Checked first: an aborted caller gets nothing stored or charged. */
  signal?: AbortSignal;
}

export interface StoredTurn {
  conversation: ConversationRecord;
  user: MessageRecord;
  assistant: MessageRecord;
  credits: CreditRecord;
}

export interface StoredRegeneration {
  conversation: ConversationRecord;
  assistant: MessageRecord;
  credits: CreditRecord;
}

export interface StoredMessage {
  conversation: ConversationRecord;
  message: MessageRecord;
}

/** A handling change as the storage made it. */
export interface HandlingChange {
  handling: Handling;
  at: string;
  /** Kept when the conversation goes to a person. */
  reason?: string | null;
}

export interface HandledRecord {
  conversation: ConversationRecord;
  /** False when the conversation was already handled that way (nothing written, no event). */
  changed: boolean;
}

export interface EndedRecord {
  conversation: ConversationRecord & { ended_at: string };
  /** Visible messages at the end. */
  message_count: number;
  /** False when another request ended it first (no event recorded then). */
  closed_here: boolean;
}

/**
 * Conversations and their messages. Every write that changes more than one
 * row is one method and one transaction; events passed as {@link EventOf}
 * are built and their outbox rows written inside it.
 */
export interface ConversationStore {
  /** One transaction: inserts the conversation, records `event` (e.g. `conversation_started`). */
  start(conversation: NewConversation, event: EventOf<ConversationRecord>): Promise<WithEvents<ConversationRecord>>;
  find(id: number): Promise<ConversationRecord | undefined>;
  /**
   * One transaction: sets `ended_at` unless set already; when this call ended
   * it, records `event` built from the ended conversation and its visible message count.
   */
  end(id: number, endedAt: string, event: EventOf<Omit<EndedRecord, "closed_here">>): Promise<WithEvents<EndedRecord> | undefined>;
  /** Account level: one page, newest first, with each conversation's visible message count. */
  page(filter: ConversationFilter, page: PageRequest): Promise<PageOf<ConversationRecord & { message_count: number }>>;

  /**
   * Exports: the filtered conversations (by `started_at`, like {@link page}) with their
   * visible messages, oldest first, in pages of at most `pageSize` conversations read one
   * at a time (keyset on the id), so an export of any size holds one page in memory.
   * Each page is its own read: conversations started while it runs may be included.
   */
  exportPages(filter: ListFilter, pageSize: number): AsyncIterable<ExportedConversation[]>;

  /** Visible (not regenerated) messages, oldest first. */
  messages(conversationId: number): Promise<MessageRecord[]>;
  /** Visible messages, newest first, `limit` at most, only those with an id below `beforeId` when given: a conversation read from its end. */
  latestMessages(conversationId: number, limit: number, beforeId?: number): Promise<MessageRecord[]>;
  countMessages(conversationId: number): Promise<number>;
  findMessage(conversationId: number, messageId: number): Promise<MessageRecord | undefined>;
  rate(messageId: number, rating: "good" | "bad"): Promise<void>;

  /**
   * The send-message write, one transaction: re-checks the conversation
   * (aborted caller, gone, ended), charges the credits (refused when they ran
   * out meanwhile), stores the visitor message and the reply, moves
   * `last_message_at` to the reply's time, records `event` (`message_received`).
   */
  storeTurn(
    ref: ConversationRef,
    turn: { user: NewMessage; assistant: NewMessage; charge: Charge },
    event: EventOf<{ conversation: ConversationRecord; user: MessageRecord }>,
  ): Promise<WithEvents<StoredTurn> | TurnRefusal>;
  /**
   * The regenerate write, one transaction: re-checks as {@link storeTurn} does and
   * that `replaces` is still the latest reply, charges, flags it regenerated,
   * stores the new reply, moves `last_message_at`. Records no event.
   */
  storeRegeneration(ref: ConversationRef, replaces: number, assistant: NewMessage, charge: Charge): Promise<StoredRegeneration | TurnRefusal>;
  /**
   * An operator's (or relayed visitor's) message, one transaction: re-checks the
   * conversation, stores the message, moves `last_message_at`, records `event` when given.
   */
  /**
   * Hands the conversation to a person or back to the bot, one transaction:
   * re-checks it (gone, ended), sets `handling`, sets `handed_off_at` the first
   * time it goes to a person and keeps the reason; when this call changed the
   * handling, records `event` (e.g. `handoff_requested`) built from the updated conversation.
   */
  setHandling(ref: ConversationRef, change: HandlingChange, event?: EventOf<ConversationRecord>): Promise<WithEvents<HandledRecord> | TurnRefusal>;
  storeMessage(ref: ConversationRef, message: NewMessage, event?: EventOf<{ conversation: ConversationRecord; message: MessageRecord }>): Promise<WithEvents<StoredMessage> | TurnRefusal>;
}
