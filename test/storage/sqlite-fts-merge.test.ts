// SQLite only: the full-text index merges its segments after knowledge writes, in steps of its own, and stays whole.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { questionKey } from "../../src/analytics/questions.js";
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

describe.skipIf(testEngine === "postgres")("SQLite full-text merging", () => {
  it("leaves no segments waiting to be merged after many writes and removals, and every document is still found", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const file = join(dir.dir, "merge.db");
    const storage = openSqliteStorage(file, { encodeEvent: encodeWebhookEvent, questionKey });
    cleanups.push(() => storage.close());
    const { bot } = await seedTenant(storage, { at: NOW });
    // Each write commits a segment of its own: enough of them to need merges on more than one level.
    const word = (i: number) => `zq${i.toString(36)}x`;
    for (let i = 0; i < 80; i++) {
      const content = `Document ${i} mentions ${word(i)} among other words about billing and refunds.`;
      await storage.knowledge.writeBatch({
        chatbot_id: bot.id,
        embedder: { spec: "test", dimension: 4 },
        documents: [{ fields: { name: `${i}.md`, type: "file", source: `/${i}.md`, url: null, content_hash: String(i), chunk_count: 1, bytes: content.length, etag: null, last_modified: null, fetched_at: null }, chunks: [{ heading: "", content, vector: Float32Array.from([1, 0, 0, 0]) }] }],
        now: NOW,
      });
    }
    // Another connection asks FTS5 for a merge: with nothing left to merge it changes fewer than two rows.
    const other = new Database(file);
    cleanups.push(() => other.close());
    const totalChanges = other.prepare("SELECT total_changes()").pluck();
    const mergeChanges = () => {
      const before = totalChanges.get() as number;
      other.prepare("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('merge', 1000)").run();
      return (totalChanges.get() as number) - before;
    };
    expect(mergeChanges()).toBeLessThan(2);

    const documents = await storage.knowledge.documents(bot.id);
    for (const doc of documents.filter((_, i) => i % 3 === 0)) await storage.knowledge.removeDocument(bot.id, doc.id);
    expect(mergeChanges()).toBeLessThan(2);
    for (let i = 0; i < 80; i++) expect(await storage.knowledge.fullText(bot.id, [word(i)], 5)).toHaveLength(i % 3 === 0 ? 0 : 1);
    expect(() => other.prepare("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 0)").run()).not.toThrow();
  });

  it("a write whose merge cannot run (another process holds the write lock) still succeeds, and a later write merges what is left", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const file = join(dir.dir, "busy.db");
    const storage = openSqliteStorage(file, { encodeEvent: encodeWebhookEvent, questionKey, busyTimeoutMs: 20 });
    cleanups.push(() => storage.close());
    const { bot } = await seedTenant(storage, { at: NOW });
    const other = new Database(file);
    cleanups.push(() => other.close());
    const write = (i: number) =>
      storage.knowledge.writeBatch({
        chatbot_id: bot.id,
        embedder: { spec: "test", dimension: 4 },
        documents: [{ fields: { name: `${i}.md`, type: "file", source: `/${i}.md`, url: null, content_hash: String(i), chunk_count: 1, bytes: 9, etag: null, last_modified: null, fetched_at: null }, chunks: [{ heading: "", content: `note zk${i}y`, vector: Float32Array.from([1, 0, 0, 0]) }] }],
        now: NOW,
      });
    const stored = other.prepare<[string], { x: number }>("SELECT 1 AS x FROM documents WHERE source = ?");
    // Once the write has committed (here at once, on the writer thread once writes come in a row), the other
    // connection takes the lock, so a merge the write needs, which carries on in later turns, cannot run.
    for (let i = 0; i < 12; i++) {
      const written = write(i);
      while (!stored.get(`/${i}.md`)) await new Promise((resolve) => setTimeout(resolve, 1));
      other.exec("BEGIN IMMEDIATE");
      await expect(written).resolves.toMatchObject({});
      other.exec("ROLLBACK");
    }
    await write(12);
    const before = other.prepare("SELECT total_changes()").pluck().get() as number;
    other.prepare("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('merge', 1000)").run();
    expect((other.prepare("SELECT total_changes()").pluck().get() as number) - before, "segments left unmerged").toBeLessThan(2);
    for (let i = 0; i <= 12; i++) expect(await storage.knowledge.fullText(bot.id, [`zk${i}y`], 5)).toHaveLength(1);
    expect(() => other.prepare("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 0)").run()).not.toThrow();
  });
});
