import type { Storage, StorageOptions } from "../../core/storage/index.js";
import { createLeaseStore } from "./leases.js";
import { createAnalyticsStore } from "./analytics.js";
import { createChatbotStore } from "./chatbots.js";
import { createCommitBatch } from "./commit-batch.js";
import { createConversationStore } from "./conversations.js";
import { createCorrectionStore } from "./corrections.js";
import { createCredits } from "./credits.js";
import { createDataVersion } from "./data-version.js";
import { createRecorder } from "./events.js";
import { exposedDatabaseFiles } from "./file-permissions.js";
import { createConsoleSessionStore } from "./console-sessions.js";
import { createIdempotencyStore } from "./idempotency.js";
import { createKeyStore } from "./keys.js";
import { createKnowledgeStore } from "./knowledge.js";
import { createKnowledgeWriter } from "./knowledge-writer.js";
import { createLeadStore } from "./leads.js";
import { openDatabase, type Sqlite } from "./open.js";
import { createOrgStore } from "./orgs.js";
import { createPrivacyStore } from "./privacy.js";
import { createQuestionKeying } from "./question-keys.js";
import { createSettingStore } from "./settings.js";
import { createUserStore } from "./users.js";
import { createWalCheckpoints } from "./wal-checkpoints.js";
import { createOutboxStore, createWebhookStore } from "./webhooks.js";
import { createWidgetBudgetStore } from "./widget-budgets.js";
import { createWriteGate } from "./write-gate.js";
import { createWriteProbe } from "./write-probe.js";

/** The SQLite engine's storage, with its connection for chatsvc's own tests and benchmarks. */
export interface SqliteStorage extends Storage {
  readonly engine: "sqlite";
  readonly sqlite: Sqlite;
}

/**
 * Opens (creating if needed, private to its owner) a SQLite database file,
 * applies pending migrations and returns the storage over it. One connection:
 * better-sqlite3 is synchronous, so each method's transaction runs whole
 * before any other statement of this process.
 *
 * @example
 * const storage = openSqliteStorage("./.chatsvc/chatsvc.db", { encodeEvent, questionKey });
 * await storage.close();
 */
export function openSqliteStorage(file: string, options: StorageOptions): SqliteStorage {
  const sqlite = openDatabase(file, { busyTimeoutMs: options.busyTimeoutMs }).$client;
  try {
    const record = createRecorder(sqlite, options.encodeEvent);
    const credits = createCredits(sqlite);
    const probe = createWriteProbe(sqlite);
    const keying = createQuestionKeying(sqlite, options.questionKey);
    const checkpoints = createWalCheckpoints(sqlite);
    // One per connection: conversation starts, chat turns and the webhook worker's settlements share commits;
    // a burst of them is bulk writing, whose checkpoints belong off the event loop too.
    // Between this connection's writes and the knowledge writer thread's (write-gate.ts).
    const gate = createWriteGate(sqlite);
    const batched = createCommitBatch(sqlite, { onBurst: () => checkpoints.busy(), gate });
    const dataVersion = createDataVersion(sqlite, file);
    const writer = createKnowledgeWriter(sqlite, gate);
    return {
      engine: "sqlite",
      sqlite,
      orgs: createOrgStore(sqlite),
      users: createUserStore(sqlite),
      keys: createKeyStore(sqlite, gate),
      chatbots: createChatbotStore(sqlite),
      conversations: createConversationStore(sqlite, record, credits.charge, keying, batched, gate),
      credits: credits.store,
      leads: createLeadStore(sqlite, record, gate),
      analytics: createAnalyticsStore(sqlite, keying),
      corrections: createCorrectionStore(sqlite),
      knowledge: createKnowledgeStore(sqlite, checkpoints, writer, gate),
      webhooks: createWebhookStore(sqlite),
      outbox: createOutboxStore(sqlite, record, batched),
      settings: createSettingStore(sqlite),
      leases: createLeaseStore(sqlite, gate),
      privacy: createPrivacyStore(sqlite),
      idempotency: createIdempotencyStore(sqlite, gate),
      consoleSessions: createConsoleSessionStore(sqlite),
      widgetBudgets: createWidgetBudgetStore(sqlite, gate),
      changes: { version: () => dataVersion.read() },
      async probeWrite() {
        return gate.run(probe);
      },
      exposedFiles: () => exposedDatabaseFiles(file),
      releaseMemory: () => releaseMemory(sqlite),
      async close() {
        dataVersion.close();
        await writer.close();
        await checkpoints.close();
        if (sqlite.open) sqlite.close();
      },
    };
  } catch (error) {
    sqlite.close();
    throw error;
  }
}

/** Frees the connection's page cache: a quiet server need not keep the pages its last requests read. */
function releaseMemory(sqlite: Sqlite): void {
  if (!sqlite.open) return;
  sqlite.pragma("shrink_memory");
}
