// SQLite only (PostgreSQL's plan is checked in test/postgres/engine.test.ts): a turn of a long conversation
// reads its latest messages from the end of an index, so the next message costs what a short conversation's does.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { questionKey } from "../../src/analytics/questions.js";
import { openSqliteStorage } from "../../src/storage/sqlite/index.js";
import { encodeWebhookEvent } from "../../src/webhooks/index.js";
import { testEngine } from "../support/database.js";
import { tempDir } from "../support/harness.js";
import { seedTenant } from "../support/storage-seed.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(testEngine === "postgres")("a conversation's latest messages on SQLite", () => {
  it("are read from the end of the conversation's index, not by sorting every message it holds", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    // The statements the storage prepares, to ask SQLite how it runs the one that reads the latest messages.
    const sources: string[] = [];
    const prepare = Database.prototype.prepare;
    Database.prototype.prepare = function (this: Database.Database, source: string) {
      sources.push(source);
      return prepare.call(this, source);
    } as typeof prepare;
    let storage: ReturnType<typeof openSqliteStorage>;
    try {
      storage = openSqliteStorage(join(dir.dir, "order.db"), { encodeEvent: encodeWebhookEvent, questionKey });
    } finally {
      Database.prototype.prepare = prepare;
    }
    cleanups.push(() => storage.close());
    const { bot } = await seedTenant(storage);
    const at = new Date().toISOString();
    const { id } = storage.sqlite
      .prepare("INSERT INTO conversations (chatbot_id, session_id, started_at, last_message_at) VALUES (?, 'long', ?, ?) RETURNING id")
      .get(bot.id, at, at) as { id: number };
    storage.sqlite
      .prepare(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) " +
          "INSERT INTO messages (conversation_id, role, content, created_at) SELECT ?, CASE i % 2 WHEN 1 THEN 'user' ELSE 'assistant' END, 'message ' || i, ? FROM n",
      )
      .run(id, at);
    // Newer messages of another conversation: the latest of this one are not simply the table's last rows.
    storage.sqlite
      .prepare("INSERT INTO conversations (chatbot_id, session_id, started_at, last_message_at) VALUES (?, 'other', ?, ?)")
      .run(bot.id, at, at);
    storage.sqlite
      .prepare(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) " +
          "INSERT INTO messages (conversation_id, role, content, created_at) SELECT last_insert_rowid(), 'user', 'other ' || i, ? FROM n",
      )
      .run(at);
    storage.sqlite.exec("ANALYZE");

    const latest = await storage.conversations.latestMessages(id, 24);
    expect(latest.map((m) => m.content)).toEqual(Array.from({ length: 24 }, (_, i) => `message ${3000 - i}`));
    const before = await storage.conversations.latestMessages(id, 24, latest.at(-1)!.id);
    expect(before[0]!.content).toBe("message 2976");

    const statement = sources.filter((s) => /FROM messages WHERE conversation_id = @conversation/.test(s));
    expect(statement).toHaveLength(1);
    const plan = (storage.sqlite.prepare(`EXPLAIN QUERY PLAN ${statement[0]}`).all({ conversation: id, before: null, limit: 24 }) as { detail: string }[]).map((r) => r.detail);
    expect(plan.join("\n")).toContain("messages_conversation_order_idx");
    expect(plan.join("\n")).not.toMatch(/TEMP B-TREE/);
  });
});
