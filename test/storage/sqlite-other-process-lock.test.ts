// SQLite only: a request's write that finds the write lock held by another process (`chatsvc ingest` while
// `serve` runs) waits for it without holding the event loop, as one behind the knowledge writer thread does.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { questionKey } from "../../src/analytics/questions.js";
import type { DomainEvent } from "../../src/core/events.js";
import { openSqliteStorage } from "../../src/storage/sqlite/index.js";
import { encodeWebhookEvent } from "../../src/webhooks/index.js";
import { testEngine } from "../support/database.js";
import { tempDir } from "../support/harness.js";
import { newConversation, seedTenant } from "../support/storage-seed.js";

const NOW = "2026-01-01T00:00:00.000Z";
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function open(busyTimeoutMs: number) {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const file = join(dir.dir, "lock.db");
  const storage = openSqliteStorage(file, { encodeEvent: encodeWebhookEvent, questionKey, busyTimeoutMs });
  cleanups.push(() => storage.close());
  const { org, bot } = await seedTenant(storage, { at: NOW });
  // Another connection stands in for the other process: its lock is invisible to the write gate's shared memory.
  const other = new Database(file);
  cleanups.push(() => other.close());
  const event = (): DomainEvent => ({ name: "message_received", organizationId: org.id, data: {} as never });
  const { result: conversation } = await storage.conversations.start(
    newConversation(bot, "api_lock", NOW),
    event,
  );
  const storeTurn = (question: string) =>
    storage.conversations.storeTurn(
      { id: conversation.id, chatbot_id: bot.id },
      {
        user: { role: "user", content: question, created_at: NOW },
        assistant: { role: "assistant", content: "<p>answer</p>", created_at: NOW },
        charge: { organization_id: org.id, month: "2026-01", cost: 1 },
      },
      event,
    );
  const questions = async () => (await storage.conversations.messages(conversation.id)).filter((m) => m.role === "user").map((m) => m.content);
  return { other, storeTurn, questions };
}

describe.skipIf(testEngine === "postgres")("SQLite writes while another process holds the write lock", () => {
  it("wait for its end without holding the event loop, then are stored in order", async () => {
    // With SQLite's busy handler the event loop would sleep inside the write, so the COMMIT below would never come.
    const { other, storeTurn, questions } = await open(2_000);
    other.exec("BEGIN IMMEDIATE");
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 5);
    let ticksWhenStored = 0;
    const stored = Promise.all(["first", "second", "third"].map(storeTurn)).finally(() => (ticksWhenStored = ticks));
    setTimeout(() => other.exec("COMMIT"), 300);
    try {
      expect((await stored).some((turn) => "refused" in turn)).toBe(false);
    } finally {
      clearInterval(ticking);
    }
    expect(ticksWhenStored).toBeGreaterThan(0);
    // In the order they were asked for.
    expect(await questions()).toEqual(["first", "second", "third"]);
  });

  it("fail with SQLITE_BUSY once the busy timeout has passed, storing nothing, and the next one is stored", async () => {
    const { other, storeTurn, questions } = await open(50);
    other.exec("BEGIN IMMEDIATE");
    await expect(storeTurn("timed out")).rejects.toMatchObject({ code: "SQLITE_BUSY" });
    other.exec("ROLLBACK");
    await storeTurn("after");
    expect(await questions()).toEqual(["after"]);
  });
});
