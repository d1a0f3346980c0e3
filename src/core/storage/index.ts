/**
 * The storage seam: what domain code may ask of a database, one interface per
 * aggregate, implemented once per engine (src/storage/sqlite, src/storage/postgres).
 * Records are plain objects with snake_case fields; times are ISO 8601 UTC
 * strings; JSON columns travel as JSON text.
 *
 * Every method is async and is its own transaction: a method that writes
 * several rows runs them in ONE transaction of the engine (SQLite: a
 * `BEGIN IMMEDIATE` transaction run synchronously; PostgreSQL: BEGIN..COMMIT
 * on one pooled client), so no other request's statements run inside it and
 * no reader sees its rows before it commits. Callbacks handed to a write
 * (`EventOf`, `patchOf`) run inside the transaction and must be synchronous.
 *
 * What each write's transaction covers:
 * - users.create, chatbots.create: the existence and uniqueness checks with the insert.
 * - keys.create / enable / regenerate: the owner lookup and the active-key limit with the write.
 * - chatbots.update: reading the current row, `patchOf`, the update.
 * - conversations.start: the insert + its event's outbox rows.
 * - conversations.end: `ended_at` (only if unset) + the visible message count + the event's outbox rows.
 * - conversations.storeTurn: re-check (aborted, gone, ended) + credit check and charge + both
 *   messages + `last_message_at` + the reply's source citations + the `message_received` outbox rows.
 * - conversations.storeRegeneration: re-check + latest-reply check + charge + flag + new reply + `last_message_at`
 *   + the new reply's source citations.
 * - conversations.storeMessage: re-check + the message + `last_message_at` + outbox rows when an event is given.
 * - conversations.setHandling: re-check + `handling` (and `handed_off_at` the first time) + outbox rows when it changed.
 * - leads.capture: the insert + the `lead_captured` outbox rows.
 * - corrections.fromMessage: the reply and question lookups with the insert.
 * - knowledge.writeBatch: embedder record + every document, chunk, full-text row and vector of the batch.
 * - knowledge.removeDocument: the document with its chunks, full-text rows and vectors.
 * - knowledge.replaceVectors: the optional wipe + embedder record + every vector.
 * - webhooks.register / delete: the ownership check with the write.
 * - outbox.record: the event's outbox rows.
 * - outbox.settle: every attempt's outcome with its webhook's counters, then the claim of due rows.
 * - keys.touch, outbox.release: the whole batch.
 * - widgetBudgets.reserve / release: every counter of the message (all or none).
 * - idempotency.claim: one conditional upsert (then a read when someone else holds the key).
 * - leases.acquire: one conditional upsert.
 * - consoleSessions.consumeLoginToken / resumeSession: one statement each (delete or update, returning the user).
 * - privacy.eraseVisitor / purgeInactive: the selection, every deleted conversation's messages,
 *   leads and outbox rows, the conversations, and the audit row.
 * Other writes are single statements.
 *
 * Events: a write that records events returns them (`WithEvents`) with the
 * number of outbox rows each queued; the caller publishes them to in-process
 * listeners after the method resolved, i.e. after commit.
 *
 * Not here yet: the API and widget rate limits (in-process token buckets
 * today); they get their own interface when they move into the database.
 */
import type { AnalyticsStore } from "./analytics.js";
import type { ChangeFeed } from "./changes.js";
import type { ChatbotStore } from "./chatbots.js";
import type { ConsoleSessionStore } from "./console-sessions.js";
import type { ConversationStore } from "./conversations.js";
import type { CorrectionStore } from "./corrections.js";
import type { CreditStore } from "./credits.js";
import type { KnowledgeStore } from "./knowledge.js";
import type { LeadStore } from "./leads.js";
import type { LeaseStore } from "./leases.js";
import type { OrgStore } from "./orgs.js";
import type { PrivacyStore } from "./privacy.js";
import type { SettingStore } from "./settings.js";
import type { UserStore } from "./users.js";
import type { IdempotencyStore } from "./idempotency.js";
import type { RateLimitStore } from "./rate-limits.js";
import type { KeyStore } from "./keys.js";
import type { WidgetBudgetStore } from "./widget-budgets.js";
import type { OutboxEncoder, OutboxStore, WebhookStore } from "./webhooks.js";

export type * from "./analytics.js";
export type * from "./changes.js";
export type * from "./chatbots.js";
export type * from "./console-sessions.js";
export type * from "./conversations.js";
export type * from "./corrections.js";
export type * from "./credits.js";
export type * from "./events.js";
export type * from "./idempotency.js";
export type * from "./rate-limits.js";
export type * from "./keys.js";
export type * from "./knowledge.js";
export type * from "./leads.js";
export type * from "./leases.js";
export type * from "./orgs.js";
export type * from "./privacy.js";
export type * from "./settings.js";
export type * from "./users.js";
export type * from "./webhooks.js";
export type * from "./widget-budgets.js";

/** A database file whose permissions let group or others in (SQLite; other engines report none). */
export interface ExposedFile {
  path: string;
  /** Octal permission bits, e.g. `"0644"`. */
  mode: string;
}

/** One open database, whichever engine runs it. */
export interface Storage {
  /** For logs and diagnostics only: domain code must not branch on it. */
  readonly engine: "sqlite" | "postgres";
  readonly orgs: OrgStore;
  readonly users: UserStore;
  readonly keys: KeyStore;
  readonly chatbots: ChatbotStore;
  readonly conversations: ConversationStore;
  readonly credits: CreditStore;
  readonly leads: LeadStore;
  readonly analytics: AnalyticsStore;
  readonly corrections: CorrectionStore;
  readonly knowledge: KnowledgeStore;
  readonly webhooks: WebhookStore;
  readonly outbox: OutboxStore;
  readonly settings: SettingStore;
  readonly leases: LeaseStore;
  /** Visitor erasure, retention and their audit log. */
  readonly privacy: PrivacyStore;
  /**
   * Rate-limit buckets in the database, on engines several instances share
   * (PostgreSQL); absent where one process serves (SQLite keeps them in memory).
   */
  readonly rateLimits?: RateLimitStore;
  /**
   * Calls `onDue` when another instance queued outbox rows (a wake-up hint; workers
   * poll anyway). Engines several instances share provide it. Returns a function that stops.
   */
  watchOutbox?(onDue: () => void): () => void;
  readonly idempotency: IdempotencyStore;
  readonly widgetBudgets: WidgetBudgetStore;
  readonly consoleSessions: ConsoleSessionStore;
  readonly changes: ChangeFeed;
  /** A small real write proving the database takes writes (health checks); rejects with the engine's error. */
  probeWrite(): Promise<void>;
  /** Files of the database that group or others may read or write, for `serve` to warn about. */
  exposedFiles(): ExposedFile[];
  /** Gives back memory this process holds for the database and can do without while quiet (caches, mappings). */
  releaseMemory(): void;
  /** Closes the database (pool). Safe to call twice. */
  close(): Promise<void>;
}

/** What every engine's factory is given besides its location. */
export interface StorageOptions {
  /** The bytes an event's outbox rows carry (the webhook body); from the webhooks layer. */
  encodeEvent: OutboxEncoder;
  /** Milliseconds a writer waits for another writer's lock before failing. */
  busyTimeoutMs?: number;
  /**
   * The near-duplicate grouping key of a (trimmed) visitor question, stored with each unanswered
   * reply so reports group by it; from the analytics layer, since it needs retrieval's stemmer.
   */
  questionKey: (question: string) => string;
}
