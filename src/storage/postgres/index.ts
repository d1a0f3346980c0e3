import type { Storage, StorageOptions } from "../../core/storage/index.js";
import type { RateLimitStore } from "../../core/storage/rate-limits.js";
import { createPgLeaseStore } from "./leases.js";
import { createPgAnalyticsStore } from "./analytics.js";
import { createChangeFeed } from "./changes.js";
import { createPgChatbotStore } from "./chatbots.js";
import { run, statement } from "./client.js";
import { createPgConversationStore } from "./conversations.js";
import { createPgCorrectionStore } from "./corrections.js";
import { createPgCreditStore } from "./credits.js";
import { createPgKeyStore } from "./keys.js";
import { createPgKnowledgeStore } from "./knowledge.js";
import { createPgLeadStore } from "./leads.js";
import { openPostgres, type OpenPostgresOptions, type PgDb } from "./open.js";
import { createPgOrgStore } from "./orgs.js";
import { createPgPrivacyStore } from "./privacy.js";
import { createPgQuestionKeying } from "./question-keys.js";
import { createOutboxSignal, type OutboxSignal } from "./outbox-signal.js";
import { createPgOutboxStore } from "./outbox.js";
import { createPgRateLimitStore } from "./rate-limits.js";
import { createPgSettingStore } from "./settings.js";
import { createPgUserStore } from "./users.js";
import { createPgWebhookStore } from "./webhooks.js";
import { createPgConsoleSessionStore } from "./console-sessions.js";
import { createPgIdempotencyStore } from "./idempotency.js";
import { createPgWidgetBudgetStore } from "./widget-budgets.js";

export { isPostgresUrl, migratePostgres, openPostgres } from "./open.js";

/** The PostgreSQL engine's storage, with its pool for chatsvc's own tests and benchmarks. */
export interface PostgresStorage extends Storage {
  readonly engine: "postgres";
  readonly db: PgDb;
  readonly rateLimits: RateLimitStore;
  watchOutbox(onDue: () => void): () => void;
}

export interface PostgresStorageOptions extends StorageOptions, OpenPostgresOptions {
  /** Where background failures (change polling, notifications) are reported. Default `console.error`. */
  onError?: (error: unknown) => void;
}

const probe = statement(
  "health_probe",
  `INSERT INTO settings (key, value, updated_at) VALUES ('health_probe', $1, $1)
   ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
);

/**
 * Opens a PostgreSQL database (a pool; pending migrations applied under an
 * advisory lock) and returns the storage over it. Several instances may share
 * the database: everything they must agree on lives in it.
 *
 * @example
 * const storage = await openPostgresStorage("postgres://chatsvc@db/chatsvc", { encodeEvent, questionKey });
 * await storage.close();
 */
export async function openPostgresStorage(url: string, options: PostgresStorageOptions): Promise<PostgresStorage> {
  const { encodeEvent, onError = (e) => console.error("chatsvc: postgres", e) } = options;
  const db = await openPostgres(url, options);
  const pool = db.$client;
  const changes = createChangeFeed(pool, onError);
  const signal = createOutboxSignal(pool, url, onError);
  const queued = () => signal.queued();
  const rateLimits = createPgRateLimitStore(pool);
  const keying = createPgQuestionKeying(pool, options.questionKey);
  await changes.ready;
  let closed = false;
  return {
    engine: "postgres",
    db,
    watchOutbox: (onDue) => signal.watch(onDue),
    rateLimits,
    orgs: createPgOrgStore(pool),
    users: createPgUserStore(pool),
    keys: createPgKeyStore(pool),
    chatbots: createPgChatbotStore(pool),
    conversations: createPgConversationStore(pool, encodeEvent, queued, keying),
    credits: createPgCreditStore(pool),
    leads: createPgLeadStore(pool, encodeEvent, queued),
    analytics: createPgAnalyticsStore(pool, keying),
    corrections: createPgCorrectionStore(pool),
    knowledge: createPgKnowledgeStore(pool),
    webhooks: createPgWebhookStore(pool),
    outbox: createPgOutboxStore(pool, encodeEvent, queued),
    settings: createPgSettingStore(pool),
    leases: createPgLeaseStore(pool),
    privacy: createPgPrivacyStore(pool),
    widgetBudgets: createPgWidgetBudgetStore(pool),
    idempotency: createPgIdempotencyStore(pool),
    consoleSessions: createPgConsoleSessionStore(pool),
    changes,
    async probeWrite() {
      await run(pool, probe, [new Date().toISOString()]);
    },
    exposedFiles: () => [],
    // The data lives in the server's processes; pooled connections hold little here, and closing them would slow the next request.
    releaseMemory() {},
    async close() {
      if (closed) return;
      closed = true;
      changes.close();
      rateLimits.close();
      await signal.close();
      await pool.end();
    },
  };
}
