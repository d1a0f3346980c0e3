import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/*
 * Timestamps are ISO 8601 UTC strings with milliseconds (`Date#toISOString`):
 * they sort lexically, compare with `<`/`>` in SQL and go out over the API unchanged.
 * JSON columns hold JSON text; the core modules parse them.
 */

const createdAt = () => text("created_at").notNull();

export const organizations = sqliteTable("organizations", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull(),
  creditsMonthly: integer("credits_monthly").notNull().default(10_000),
  brandRemoval: integer("brand_removal", { mode: "boolean" }).notNull().default(false),
  /** Conversations inactive (by `last_message_at`) for longer than this many days are deleted; null keeps them. */
  retentionDays: integer("retention_days"),
  createdAt: createdAt(),
});

export const users = sqliteTable("users", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  organizationId: integer("organization_id")
    .notNull()
    .references(() => organizations.id, { onDelete: "cascade" }),
  email: text("email").notNull().unique(),
  name: text("name"),
  createdAt: createdAt(),
});

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    keyHash: text("key_hash").notNull().unique(),
    status: text("status", { enum: ["active", "disabled"] }).notNull().default("active"),
    expiresAt: text("expires_at"),
    lastUsedAt: text("last_used_at"),
    attributionAcceptedAt: text("attribution_accepted_at").notNull(),
    attributionIp: text("attribution_ip"),
    createdAt: createdAt(),
  },
  (t) => [index("api_keys_user_idx").on(t.userId)],
);

export const chatbots = sqliteTable(
  "chatbots",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    organizationId: integer("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    slug: text("slug").notNull().unique(),
    name: text("name").notNull(),
    displayName: text("display_name"),
    description: text("description").notNull().default(""),
    language: text("language").notNull().default("en"),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    greetingMessage: text("greeting_message").notNull().default(""),
    fallbackMessage: text("fallback_message").notNull().default(""),
    placeholderText: text("placeholder_text").notNull().default(""),
    appearance: text("appearance").notNull().default("{}"),
    model: text("model"),
    instructions: text("instructions").notNull().default(""),
    allowedOrigins: text("allowed_origins").notNull().default("[]"),
    /** Whether visitors may ask for a person (the widget shows its button). */
    handoffEnabled: integer("handoff_enabled", { mode: "boolean" }).notNull().default(false),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("chatbots_org_idx").on(t.organizationId)],
);

export const conversations = sqliteTable(
  "conversations",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    chatbotId: integer("chatbot_id")
      .notNull()
      .references(() => chatbots.id, { onDelete: "cascade" }),
    sessionId: text("session_id").notNull().unique(),
    visitorId: text("visitor_id"),
    visitorName: text("visitor_name"),
    visitorEmail: text("visitor_email"),
    visitorPhone: text("visitor_phone"),
    metadata: text("metadata").notNull().default("{}"),
    source: text("source").notNull().default("api"),
    sourceUrl: text("source_url"),
    ip: text("ip"),
    country: text("country"),
    startedAt: text("started_at").notNull(),
    lastMessageAt: text("last_message_at").notNull(),
    endedAt: text("ended_at"),
    /** `bot` answers visitors, or `human`: a person does and the bot stays silent. */
    handling: text("handling", { enum: ["bot", "human"] }).notNull().default("bot"),
    /** The first time the conversation went to a person; never cleared (analytics counts handoffs from it). */
    handedOffAt: text("handed_off_at"),
    /** Why it went to a person the last time, when someone said. */
    handoffReason: text("handoff_reason"),
  },
  (t) => [
    index("conversations_chatbot_started_idx").on(t.chatbotId, t.startedAt),
    // Analytics finds the conversations active in a range by their last message.
    index("conversations_chatbot_last_message_idx").on(t.chatbotId, t.lastMessageAt),
    // Handoffs per day: only the conversations that went to a person.
    index("conversations_chatbot_handed_off_idx").on(t.chatbotId, t.handedOffAt).where(sql`handed_off_at IS NOT NULL`),
  ],
);

export const messages = sqliteTable(
  "messages",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    conversationId: integer("conversation_id")
      .notNull()
      .references(() => conversations.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["user", "assistant", "agent"] }).notNull(),
    content: text("content").notNull(),
    sources: text("sources").notNull().default("[]"),
    model: text("model"),
    responseMs: integer("response_ms"),
    rating: text("rating", { enum: ["good", "bad"] }),
    regenerated: integer("regenerated", { mode: "boolean" }).notNull().default(false),
    /** The person who wrote an `agent` message, when the operator named them. */
    agentName: text("agent_name"),
    cannotAnswer: integer("cannot_answer", { mode: "boolean" }).notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [
    // Covers the per-day analytics counts, so they read the index only, never the message rows.
    index("messages_analytics_idx").on(t.conversationId, t.createdAt, t.role, t.regenerated, t.cannotAnswer, t.rating, t.model),
    // A conversation's messages in id order: its latest turns (a model's history, every turn) are read from the end
    // of this index; in the analytics index, ordered by time, they were found by sorting the whole conversation.
    index("messages_conversation_order_idx").on(t.conversationId, t.id),
  ],
);

export const leads = sqliteTable(
  "leads",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    organizationId: integer("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    chatbotId: integer("chatbot_id")
      .notNull()
      .references(() => chatbots.id, { onDelete: "cascade" }),
    conversationId: integer("conversation_id")
      .notNull()
      .references(() => conversations.id, { onDelete: "cascade" }),
    name: text("name"),
    email: text("email"),
    phone: text("phone"),
    company: text("company"),
    message: text("message"),
    source: text("source").notNull().default("api"),
    sourceUrl: text("source_url"),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("leads_org_created_idx").on(t.organizationId, t.createdAt), index("leads_chatbot_created_idx").on(t.chatbotId, t.createdAt)],
);

/** Answer corrections: a chatbot answers a visitor question matching `question` with `answer` (Markdown). */
export const corrections = sqliteTable(
  "corrections",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    chatbotId: integer("chatbot_id")
      .notNull()
      .references(() => chatbots.id, { onDelete: "cascade" }),
    question: text("question").notNull(),
    answer: text("answer").notNull(),
    sourceName: text("source_name"),
    sourceUrl: text("source_url"),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("corrections_chatbot_idx").on(t.chatbotId)],
);

export const creditLedger = sqliteTable(
  "credit_ledger",
  {
    organizationId: integer("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** UTC calendar month, `YYYY-MM`. */
    month: text("month").notNull(),
    creditsUsed: integer("credits_used").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.month] })],
);

export const webhooks = sqliteTable(
  "webhooks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    organizationId: integer("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    url: text("url").notNull(),
    events: text("events").notNull().default("[]"),
    secret: text("secret").notNull(),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    totalTriggers: integer("total_triggers").notNull().default(0),
    failedTriggers: integer("failed_triggers").notNull().default(0),
    lastTriggeredAt: text("last_triggered_at"),
    lastFailureAt: text("last_failure_at"),
    lastFailureStatus: integer("last_failure_status"),
    lastFailureError: text("last_failure_error"),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("webhooks_org_url_idx").on(t.organizationId, t.url)],
);

export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    webhookId: integer("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    /** Standard Webhooks `webhook-id`: stable across retries of one delivery. */
    messageId: text("message_id").notNull().unique(),
    event: text("event").notNull(),
    payload: text("payload").notNull(),
    /** The conversation the payload is about (null for events about none): erasure deletes its deliveries. */
    conversationId: integer("conversation_id"),
    status: text("status", { enum: ["pending", "delivered", "failed"] }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    /** Epoch milliseconds; the worker picks pending rows whose time has come. */
    nextAttemptAt: integer("next_attempt_at").notNull(),
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("webhook_deliveries_due_idx").on(t.status, t.nextAttemptAt), index("webhook_deliveries_conversation_idx").on(t.conversationId)],
);

export const documents = sqliteTable(
  "documents",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    chatbotId: integer("chatbot_id")
      .notNull()
      .references(() => chatbots.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** `file` or `url`; surfaces as a source's `type`. */
    type: text("type").notNull(),
    /** Where the document came from (absolute path or URL): the identity used to update on re-ingest. */
    source: text("source").notNull(),
    url: text("url"),
    contentHash: text("content_hash").notNull(),
    /** A fetched page's validators, sent back when `kb sync` asks whether it changed; null when the server gave none. */
    etag: text("etag"),
    lastModified: text("last_modified"),
    /** When the page was last fetched or confirmed unchanged; null for documents not fetched from their URL (files, texts). */
    fetchedAt: text("fetched_at"),
    chunkCount: integer("chunk_count").notNull().default(0),
    bytes: integer("bytes").notNull().default(0),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("documents_chatbot_source_idx").on(t.chatbotId, t.source),
    index("documents_chatbot_hash_idx").on(t.chatbotId, t.contentHash),
  ],
);

/** Sitemaps a chatbot's pages were ingested from: `kb sync` reads them again to add pages listed since. */
export const webSitemaps = sqliteTable(
  "web_sitemaps",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    chatbotId: integer("chatbot_id")
      .notNull()
      .references(() => chatbots.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("web_sitemaps_chatbot_url_idx").on(t.chatbotId, t.url)],
);

export const chunks = sqliteTable(
  "chunks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    documentId: integer("document_id")
      .notNull()
      .references(() => documents.id, { onDelete: "cascade" }),
    chatbotId: integer("chatbot_id").notNull(),
    ordinal: integer("ordinal").notNull(),
    /** Heading path, e.g. `Install > From npm`; empty when the chunk has none. */
    heading: text("heading").notNull().default(""),
    content: text("content").notNull(),
  },
  (t) => [index("chunks_document_idx").on(t.documentId), index("chunks_chatbot_idx").on(t.chatbotId)],
);

/**
 * How often each chatbot's replies cited a document, by the name `sources` shows: counted
 * when a reply is stored, because reading every reply's `sources` JSON per report took seconds.
 */
export const sourceCitations = sqliteTable(
  "source_citations",
  {
    chatbotId: integer("chatbot_id")
      .notNull()
      .references(() => chatbots.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    cited: integer("cited").notNull().default(0),
    lastCitedAt: text("last_cited_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.chatbotId, t.name] })],
);

/**
 * Per chatbot and UTC day (`YYYY-MM-DD`), what `GET /analytics` counts: derived
 * data kept by triggers on conversations, messages and leads (see the
 * `analytics_daily` migration), so every write that changes a count changes it
 * in the same transaction, and a report reads one row per day instead of every
 * message of its range.
 */
export const analyticsDaily = sqliteTable(
  "analytics_daily",
  {
    chatbotId: integer("chatbot_id")
      .notNull()
      .references(() => chatbots.id, { onDelete: "cascade" }),
    day: text("day").notNull(),
    conversations: integer("conversations").notNull().default(0),
    visitorMessages: integer("visitor_messages").notNull().default(0),
    answered: integer("answered").notNull().default(0),
    cannotAnswer: integer("cannot_answer").notNull().default(0),
    goodRatings: integer("good_ratings").notNull().default(0),
    badRatings: integer("bad_ratings").notNull().default(0),
    leads: integer("leads").notNull().default(0),
    handoffs: integer("handoffs").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.chatbotId, t.day] })],
);

/**
 * The visible bot replies that could not answer or were rated bad, one row each, with the
 * visitor question before the reply: what `GET /analytics/unanswered` groups. Derived data:
 * triggers on messages keep the rows (see the `unanswered_questions` migration) in the
 * transaction of every write, and `question_key` (the near-duplicate grouping key, which
 * needs the stemmer, so it cannot be computed in SQL) is filled by the storage layer's
 * `keyQuestions`, so a report groups by a stored key instead of reading every message.
 */
export const unansweredQuestions = sqliteTable(
  "unanswered_questions",
  {
    replyId: integer("reply_id")
      .primaryKey()
      .references(() => messages.id, { onDelete: "cascade" }),
    chatbotId: integer("chatbot_id")
      .notNull()
      .references(() => chatbots.id, { onDelete: "cascade" }),
    conversationId: integer("conversation_id").notNull(),
    /** When the reply was stored. */
    askedAt: text("asked_at").notNull(),
    cannotAnswer: integer("cannot_answer", { mode: "boolean" }).notNull(),
    badRating: integer("bad_rating", { mode: "boolean" }).notNull(),
    /** The visitor message before the reply (trimmed once keyed). */
    question: text("question").notNull(),
    /** Null until `keyQuestions` computed it. */
    questionKey: text("question_key"),
  },
  (t) => [
    index("unanswered_questions_scope_idx").on(t.chatbotId, t.askedAt),
    index("unanswered_questions_unkeyed_idx").on(t.replyId).where(sql`question_key IS NULL`),
  ],
);

/** Small key-value store for install-wide facts (e.g. which embedder built the vectors). */
export const settings = sqliteTable("settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  updatedAt: text("updated_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`),
});

/** Leases of background jobs (see core/storage/leases.ts); epoch milliseconds. */
export const leases = sqliteTable("leases", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  expiresMs: integer("expires_ms").notNull(),
  lastRunMs: integer("last_run_ms"),
});

/** A chatbot's own widget budgets; a null column (or no row) means the configured default. */
export const widgetBudgets = sqliteTable("widget_budgets", {
  chatbotId: integer("chatbot_id")
    .primaryKey()
    .references(() => chatbots.id, { onDelete: "cascade" }),
  visitorPerDay: integer("visitor_per_day"),
  chatbotPerHour: integer("chatbot_per_hour"),
  chatbotPerDay: integer("chatbot_per_day"),
  updatedAt: text("updated_at").notNull(),
});

/** Widget messages counted per chatbot, budget, subject and period; rows of past periods are pruned. */
export const widgetBudgetCounters = sqliteTable(
  "widget_budget_counters",
  {
    chatbotId: integer("chatbot_id")
      .notNull()
      .references(() => chatbots.id, { onDelete: "cascade" }),
    /** `visitor_per_day`, `chatbot_per_hour` or `chatbot_per_day`. */
    budget: text("budget").notNull(),
    /** A hash of the visitor's IP for the visitor budget; empty for the chatbot's own budgets. */
    subject: text("subject").notNull(),
    /** Start of the period (ISO, UTC hour or day). */
    period: text("period").notNull(),
    used: integer("used").notNull().default(0),
    /** When a message was first refused in this period: the budget's exhaustion is announced once. */
    exhaustedAt: text("exhausted_at"),
  },
  (t) => [primaryKey({ columns: [t.chatbotId, t.budget, t.subject, t.period] }), index("widget_budget_counters_period_idx").on(t.period)],
);

/** `Idempotency-Key` records of each organisation: the request's fingerprint and, once done, its answer. */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    organizationId: integer("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    /** Hash of the method, path and body the key was first used with. */
    fingerprint: text("fingerprint").notNull(),
    state: text("state", { enum: ["running", "done"] }).notNull(),
    status: integer("status"),
    /** The JSON answer, once done. */
    body: text("body"),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.key] }), index("idempotency_keys_created_idx").on(t.createdAt)],
);

/** One-time console sign-in links: only the SHA-256 of the token, deleted when used. */
export const consoleLoginTokens = sqliteTable(
  "console_login_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    expiresAt: text("expires_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("console_login_tokens_expires_idx").on(t.expiresAt)],
);

/** Console sessions: only the SHA-256 of the cookie's value; a session ends when idle past its limit. */
export const consoleSessions = sqliteTable(
  "console_sessions",
  {
    sessionHash: text("session_hash").primaryKey(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    lastSeenAt: text("last_seen_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("console_sessions_last_seen_idx").on(t.lastSeenAt)],
);

/** What erasure and retention deleted, when and on whose behalf; never the erased personal data itself. */
export const auditLog = sqliteTable(
  "audit_log",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    organizationId: integer("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** `visitor_erased` or `retention`. */
    action: text("action").notNull(),
    /** Who asked: `key sk_live_…` (a key prefix), `cli …` or `serve (retention)`. */
    actor: text("actor").notNull(),
    /** JSON object: what was selected (e.g. `{"selector":"email"}`, `{"retention_days":30,"cutoff":"…"}`). */
    detail: text("detail").notNull().default("{}"),
    /** JSON object of rows deleted per kind. */
    counts: text("counts").notNull().default("{}"),
    createdAt: createdAt(),
  },
  (t) => [index("audit_log_org_created_idx").on(t.organizationId, t.createdAt)],
);
