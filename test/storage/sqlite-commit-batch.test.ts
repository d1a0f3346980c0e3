// SQLite only: writes asked for in one turn of the event loop share a commit, each rolled back alone when it throws.
import { statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { questionKey } from "../../src/analytics/questions.js";
import type { DomainEvent } from "../../src/core/events.js";
import { createCommitBatch } from "../../src/storage/sqlite/commit-batch.js";
import { openSqliteStorage } from "../../src/storage/sqlite/index.js";
import { encodeWebhookEvent } from "../../src/webhooks/index.js";
import { testEngine } from "../support/database.js";
import { tempDir } from "../support/harness.js";
import { newConversation, seedTenant } from "../support/storage-seed.js";

const cleanups: (() => unknown)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function open() {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const sqlite = new Database(join(dir.dir, "batch.db"));
  cleanups.push(() => sqlite.close());
  sqlite.pragma("journal_mode = WAL");
  sqlite.exec("CREATE TABLE rows (name TEXT NOT NULL UNIQUE)");
  return sqlite;
}

describe.skipIf(testEngine === "postgres")("SQLite commit batch", () => {
  it("commits the writes of one turn together, rolling back only the one that threw", async () => {
    const sqlite = open();
    const batched = createCommitBatch(sqlite);
    const insert = sqlite.prepare<[string]>("INSERT INTO rows (name) VALUES (?)");
    const other = new Database(sqlite.name, { readonly: true });
    cleanups.push(() => other.close());
    const countOther = other.prepare("SELECT count(*) FROM rows").pluck();
    // What another connection sees while each write runs: nothing committed before the batch's one commit.
    const seenElsewhere: unknown[] = [];
    const write = sqlite.transaction((names: string[]) => {
      seenElsewhere.push(countOther.get());
      for (const name of names) insert.run(name);
      return names.length;
    });

    const outcomes = await Promise.allSettled([
      batched(() => write(["a"])),
      // Its first row is written, then the duplicate fails: both must be undone, the others kept.
      batched(() => write(["b", "a"])),
      batched(() => write(["c", "d"])),
    ]);

    expect(outcomes[0]).toEqual({ status: "fulfilled", value: 1 });
    expect(outcomes[1]).toMatchObject({ status: "rejected", reason: { code: "SQLITE_CONSTRAINT_UNIQUE" } });
    expect(outcomes[2]).toEqual({ status: "fulfilled", value: 2 });
    expect(seenElsewhere).toEqual([0, 0, 0]);
    expect(sqlite.prepare("SELECT name FROM rows ORDER BY name").pluck().all()).toEqual(["a", "c", "d"]);
    expect(sqlite.inTransaction).toBe(false);
  });

  it("answers a write only once it is committed and visible to another connection", async () => {
    const sqlite = open();
    const batched = createCommitBatch(sqlite);
    const insert = sqlite.transaction((name: string) => sqlite.prepare("INSERT INTO rows (name) VALUES (?)").run(name).changes);
    const other = new Database(sqlite.name, { readonly: true });
    cleanups.push(() => other.close());

    expect(await batched(() => insert("x"))).toBe(1);
    expect(other.prepare("SELECT count(*) FROM rows").pluck().get()).toBe(1);
  });

  it("stores chat turns that finish together in one commit, each refused or stored on its own", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const file = join(dir.dir, "turns.db");
    const storage = openSqliteStorage(file, { encodeEvent: encodeWebhookEvent, questionKey });
    cleanups.push(() => storage.close());
    const at = "2026-01-02T03:04:05.000Z";
    const { org, bot } = await seedTenant(storage, { credits: 100, at });
    const event = (): DomainEvent => ({ name: "message_received", organizationId: org.id, data: {} as never });
    const [a, b, ended] = await Promise.all(["a", "b", "c"].map((session) => storage.conversations.start(newConversation(bot, session, at), event)));
    await storage.conversations.end(ended!.result.id, at, event);
    const turn = (i: number) => ({
      user: { role: "user" as const, content: `question ${i}`, created_at: at },
      assistant: { role: "assistant" as const, content: `<p>answer ${i}</p>`, created_at: at },
      charge: { organization_id: org.id, month: "2026-01", cost: 1 },
    });
    // A commit appends every page it changed to the log: turns that share one append the pages they share once.
    const logBytes = () => statSync(`${file}-wal`).size;
    const alone = logBytes();
    await storage.conversations.storeTurn({ id: a!.result.id, chatbot_id: bot.id }, turn(0), event);
    const oneTurn = logBytes() - alone;
    const before = logBytes();

    const results = await Promise.all([
      storage.conversations.storeTurn({ id: a!.result.id, chatbot_id: bot.id }, turn(1), event),
      storage.conversations.storeTurn({ id: ended!.result.id, chatbot_id: bot.id }, turn(2), event),
      storage.conversations.storeTurn({ id: b!.result.id, chatbot_id: bot.id }, turn(3), event),
    ]);

    expect(logBytes() - before).toBeLessThan(1.5 * oneTurn);
    expect(results[1]).toEqual({ refused: "ended" });
    expect(results.filter((r) => "result" in r)).toHaveLength(2);
    expect(await storage.conversations.countMessages(a!.result.id)).toBe(4);
    expect(await storage.conversations.countMessages(b!.result.id)).toBe(2);
    expect(await storage.conversations.countMessages(ended!.result.id)).toBe(0);
    expect((await storage.credits.status(org.id, "2026-01"))!.credits_used).toBe(3);
  });
});
