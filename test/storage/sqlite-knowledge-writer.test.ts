// SQLite only: knowledge writes that come in a row (ingestion, sync) run on a writer thread of their own, so the
// service's event loop keeps turning while one waits for a lock or works; what they store is the same.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { questionKey } from "../../src/analytics/questions.js";
import type { DocumentBatch } from "../../src/core/storage/index.js";
import { openSqliteStorage } from "../../src/storage/sqlite/index.js";
import { encodeWebhookEvent } from "../../src/webhooks/index.js";
import { testEngine } from "../support/database.js";
import { tempDir } from "../support/harness.js";
import { seedTenant } from "../support/storage-seed.js";

const NOW = "2026-01-01T00:00:00.000Z";
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function open(busyTimeoutMs: number) {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const file = join(dir.dir, "writer.db");
  const storage = openSqliteStorage(file, { encodeEvent: encodeWebhookEvent, questionKey, busyTimeoutMs });
  cleanups.push(() => storage.close());
  const { bot } = await seedTenant(storage, { at: NOW });
  const other = new Database(file);
  cleanups.push(() => other.close());
  const batch = (i: number): DocumentBatch => ({
    chatbot_id: bot.id,
    embedder: { spec: "test", dimension: 4 },
    documents: [{ fields: { name: `${i}.md`, type: "file", source: `/${i}.md`, url: null, content_hash: String(i), chunk_count: 1, bytes: 9, etag: null, last_modified: null, fetched_at: null }, chunks: [{ heading: "", content: `note zw${i}q`, vector: Float32Array.from([i, 1, 0, 0]) }] }],
    now: NOW,
  });
  return { storage, bot, other, batch };
}

describe.skipIf(testEngine === "postgres")("SQLite knowledge writes in a row", () => {
  it("wait for another connection's lock without holding the event loop, then store the batch", async () => {
    const { storage, bot, other, batch } = await open(30_000);
    await storage.knowledge.writeBatch(batch(0));
    other.exec("BEGIN IMMEDIATE");
    let settled = false;
    const written = storage.knowledge.writeBatch(batch(1)).finally(() => (settled = true));
    // Timers and other callbacks run meanwhile; on this thread the write would have waited inside SQLite.
    for (let turns = 0; turns < 20; turns++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(settled).toBe(false);
    other.exec("COMMIT");
    await expect(written).resolves.toEqual({ added: 1, updated: 0 });
    const found = await storage.knowledge.fullText(bot.id, ["zw1q"], 5);
    expect(found).toHaveLength(1);
    expect((await storage.knowledge.vectorsOf(bot.id, found)).vectors).toEqual([[found[0], Float32Array.from([1, 1, 0, 0])]]);
  });

  it("reject a write that times out waiting for the lock, and the next one is stored", async () => {
    const { storage, bot, other, batch } = await open(20);
    await storage.knowledge.writeBatch(batch(0));
    other.exec("BEGIN IMMEDIATE");
    await expect(storage.knowledge.writeBatch(batch(1))).rejects.toThrow(/locked|busy/i);
    other.exec("ROLLBACK");
    await expect(storage.knowledge.writeBatch(batch(2))).resolves.toEqual({ added: 1, updated: 0 });
    expect((await storage.knowledge.documents(bot.id)).map((d) => d.source)).toEqual(["/0.md", "/2.md"]);
  });
});
