import { sql } from "drizzle-orm";
import { bigint, boolean, customType, doublePrecision, index, integer, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";

/*
 * The same tables as the SQLite schema, column for column, so both engines hand
 * the domain the same values and `db copy` moves rows without conversion.
 * Timestamps stay ISO 8601 UTC text with milliseconds: they sort and compare
 * lexically exactly as on SQLite, and go out over the API unchanged.
 * Ids are identity columns "by default", so copied rows keep their ids.
 * The full-text column (generated tsvector + GIN) is a custom migration: see
 * drizzle/postgres; drizzle-kit would not keep a generated tsvector column right.
 */

/** Raw bytes: chunk vectors as little-endian float32, the layout the in-process index reads. */
const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });

const id = () => integer("id").primaryKey().generatedByDefaultAsIdentity();
const createdAt = () => text("created_at").notNull();

export const organizations = pgTable("organizations", {
  id: id(),
  name: text("name").notNull(),
  creditsMonthly: integer("credits_monthly").notNull().default(10_000),
  brandRemoval: boolean("brand_removal").notNull().default(false),
  /** Conversations inactive (by `last_message_at`) for longer than this many days are deleted; null keeps them. */
  retentionDays: integer("retention_days"),
  createdAt: createdAt(),
});

export const users = pgTable("users", {
  id: id(),
  organizationId: integer("organization_id")
    .notNull()
    .references(() => organizations.id, { onDelete: "cascade" }),
  email: text("email").notNull().unique(),
  name: text("name"),
  createdAt: createdAt(),
});

export const apiKeys = pgTable(
  "api_keys",
  {
    id: id(),
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

export const chatbots = pgTable(
  "chatbots",
  {
    id: id(),
    organizationId: integer("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    slug: text("slug").notNull().unique(),
    name: text("name").notNull(),
    displayName: text("display_name"),
    description: text("description").notNull().default(""),
    language: text("language").notNull().default("en"),
    isActive: boolean("is_active").notNull().default(true),
    greetingMessage: text("greeting_message").notNull().default(""),
    fallbackMessage: text("fallback_message").notNull().default(""),
    placeholderText: text("placeholder_text").notNull().default(""),
    appearance: text("appearance").notNull().default("{}"),
    model: text("model"),
    instructions: text("instructions").notNull().default(""),
    allowedOrigins: text("allowed_origins").notNull().default("[]"),
    /** Whether visitors may ask for a person (the widget shows its button). */
    handoffEnabled: boolean("handoff_enabled").notNull().default(false),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("chatbots_org_idx").on(t.organizationId)],
);

export const conversations = pgTable(
  "conversations",
  {
    id: id(),
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

export const messages = pgTable(
  "messages",
  {
    id: id(),
    conversationId: integer("conversation_id")
      .notNull()
      .references(() => conversations.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["user", "assistant", "agent"] }).notNull(),
    content: text("content").notNull(),
    sources: text("sources").notNull().default("[]"),
    model: text("model"),
    responseMs: integer("response_ms"),
    rating: text("rating", { enum: ["good", "bad"] }),
    regenerated: boolean("regenerated").notNull().default(false),
    /** The person who wrote an `agent` message, when the operator named them. */
    agentName: text("agent_name"),
    cannotAnswer: boolean("cannot_answer").notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [
    // Covers the per-day analytics counts, so they can be index-only scans.
    index("messages_analytics_idx").on(t.conversationId, t.createdAt, t.role, t.regenerated, t.cannotAnswer, t.rating, t.model),
    // A conversation's messages in id order: its latest turns (a model's history, every turn) are read from the end
    // of this index; in the analytics index, ordered by time, they were found by sorting the whole conversation.
    index("messages_conversation_order_idx").on(t.conversationId, t.id),
  ],
);

export const leads = pgTable(
  "leads",
  {
    id: id(),
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
export const corrections = pgTable(
  "corrections",
  {
    id: id(),
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

export const creditLedger = pgTable(
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

export const webhooks = pgTable(
  "webhooks",
  {
    id: id(),
    organizationId: integer("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    url: text("url").notNull(),
    events: text("events").notNull().default("[]"),
    secret: text("secret").notNull(),
    isActive: boolean("is_active").notNull().default(true),
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

export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: id(),
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
    /**
     * Epoch milliseconds; any instance picks pending rows whose time has come. A claim
     * moves it to the end of the claim's lease, so a row whose deliverer died comes due again.
     */
    nextAttemptAt: bigint("next_attempt_at", { mode: "number" }).notNull(),
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("webhook_deliveries_due_idx").on(t.status, t.nextAttemptAt), index("webhook_deliveries_conversation_idx").on(t.conversationId)],
);

export const documents = pgTable(
  "documents",
  {
    id: id(),
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
export const webSitemaps = pgTable(
  "web_sitemaps",
  {
    id: id(),
    chatbotId: integer("chatbot_id")
      .notNull()
      .references(() => chatbots.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("web_sitemaps_chatbot_url_idx").on(t.chatbotId, t.url)],
);

/**
 * Knowledge chunks, with a generated full-text column (migration 0001). Rows are
 * toasted only past a page (migration 0020, which the schema cannot say): searches
 * rank every matching chunk's tsvector, and one kept out of line cost another lookup.
 */
export const chunks = pgTable(
  "chunks",
  {
    id: id(),
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
 * Chunk vectors by chunk id. Nearest-neighbour search runs on an in-process int8
 * copy per chatbot, re-scored against these rows; pgvector is not needed.
 */
export const chunkEmbeddings = pgTable(
  "chunk_embeddings",
  {
    chunkId: integer("chunk_id")
      .primaryKey()
      .references(() => chunks.id, { onDelete: "cascade" }),
    chatbotId: integer("chatbot_id").notNull(),
    embedding: bytea("embedding").notNull(),
  },
  (t) => [index("chunk_embeddings_chatbot_idx").on(t.chatbotId)],
);

/**
 * Change counters, bumped in the transaction that makes the change: every instance
 * polls them to drop what it caches in memory (API keys, a chatbot's vector index)
 * within a second of a change made through another instance.
 */
export const revisions = pgTable("revisions", {
  /** What changed, e.g. `api_keys` or `vectors:<chatbot id>`. */
  scope: text("scope").primaryKey(),
  revision: bigint("revision", { mode: "number" }).notNull(),
});

/**
 * How often each chatbot's replies cited a document, by the name `sources` shows: counted
 * when a reply is stored, because reading every reply's `sources` JSON per report took seconds.
 */
export const sourceCitations = pgTable(
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
export const analyticsDaily = pgTable(
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
export const unansweredQuestions = pgTable(
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
    cannotAnswer: boolean("cannot_answer").notNull(),
    badRating: boolean("bad_rating").notNull(),
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
export const settings = pgTable("settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  updatedAt: text("updated_at")
    .notNull()
    .default(sql`to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`),
});

/**
 * Token buckets of the API and widget rate limits, shared by every instance (see
 * rate-limits.ts). Times are the database's clock in epoch milliseconds, so
 * instances with drifting clocks still agree. UNLOGGED (migration 0017, which the
 * schema cannot say): a take then commits without waiting for the WAL to reach disk.
 */
export const rateBuckets = pgTable(
  "rate_buckets",
  {
    key: text("key").primaryKey(),
    tokens: doublePrecision("tokens").notNull(),
    updatedMs: doublePrecision("updated_ms").notNull(),
    /** When the bucket is full again: past that, the row says nothing a missing row would not. */
    fullMs: doublePrecision("full_ms").notNull(),
    /** Whether the last take was allowed: what the upsert answers. */
    ok: boolean("ok").notNull(),
  },
  (t) => [index("rate_buckets_full_idx").on(t.fullMs)],
);

/** Leases of background jobs (see core/storage/leases.ts); the database's clock in epoch milliseconds. */
export const leases = pgTable("leases", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  expiresMs: doublePrecision("expires_ms").notNull(),
  lastRunMs: doublePrecision("last_run_ms"),
});

/** A chatbot's own widget message budgets; null means the configured default. */
export const widgetBudgets = pgTable("widget_budgets", {
  chatbotId: integer("chatbot_id")
    .primaryKey()
    .references(() => chatbots.id, { onDelete: "cascade" }),
  visitorPerDay: integer("visitor_per_day"),
  chatbotPerHour: integer("chatbot_per_hour"),
  chatbotPerDay: integer("chatbot_per_day"),
  updatedAt: text("updated_at").notNull(),
});

/** Widget messages counted per budget, subject (a visitor's hash, or empty for the chatbot) and period. */
export const widgetBudgetCounters = pgTable(
  "widget_budget_counters",
  {
    chatbotId: integer("chatbot_id")
      .notNull()
      .references(() => chatbots.id, { onDelete: "cascade" }),
    budget: text("budget").notNull(),
    subject: text("subject").notNull(),
    /** Start of the period, ISO. */
    period: text("period").notNull(),
    used: integer("used").notNull().default(0),
    exhaustedAt: text("exhausted_at"),
  },
  (t) => [primaryKey({ columns: [t.chatbotId, t.budget, t.subject, t.period] }), index("widget_budget_counters_period_idx").on(t.period)],
);

/** `Idempotency-Key` records per organisation: who runs a request, then its answer. */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    organizationId: integer("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    fingerprint: text("fingerprint").notNull(),
    state: text("state", { enum: ["running", "done"] }).notNull(),
    status: integer("status"),
    body: text("body"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.key] }), index("idempotency_keys_created_idx").on(t.createdAt)],
);

/** One-time console sign-in links: only the SHA-256 of the token, deleted when used. */
export const consoleLoginTokens = pgTable(
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
export const consoleSessions = pgTable(
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
export const auditLog = pgTable(
  "audit_log",
  {
    id: id(),
    organizationId: integer("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    action: text("action").notNull(),
    actor: text("actor").notNull(),
    detail: text("detail").notNull().default("{}"),
    counts: text("counts").notNull().default("{}"),
    createdAt: createdAt(),
  },
  (t) => [index("audit_log_org_created_idx").on(t.organizationId, t.createdAt)],
);
