// SQLite only: knowledge writes that come in a row (ingestion, sync) run on a writer thread of their own, so the
// service's event loop keeps turning while one waits for a lock or works; what they store is the same.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { questionKey } from "../../src/analytics/questions.js";
import type { DomainEvent } from "../../src/core/events.js";
import type { DocumentBatch } from "../../src/core/storage/index.js";
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
  const file = join(dir.dir, "writer.db");
  const storage = openSqliteStorage(file, { encodeEvent: encodeWebhookEvent, questionKey, busyTimeoutMs });
  cleanups.push(() => storage.close());
  const { org, bot } = await seedTenant(storage, { at: NOW });
  const other = new Database(file);
  cleanups.push(() => other.close());
  const batch = (i: number): DocumentBatch => ({
    chatbot_id: bot.id,
    embedder: { spec: "test", dimension: 4 },
    documents: [{ fields: { name: `${i}.md`, type: "file", source: `/${i}.md`, url: null, content_hash: String(i), chunk_count: 1, bytes: 9, etag: null, last_modified: null, fetched_at: null }, chunks: [{ heading: "", content: `note zw${i}q`, vector: Float32Array.from([i, 1, 0, 0]) }] }],
    now: NOW,
  });
  return { storage, org, bot, other, batch };
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

  it("keep the writer thread for the next write after one that waited longer than the pause that stops it", async () => {
    // On this thread the third write would wait for the lock inside SQLite, so the timers below would not run and it would time out.
    const { storage, other, batch } = await open(6_000);
    await storage.knowledge.writeBatch(batch(0));
    other.exec("BEGIN IMMEDIATE");
    const slow = storage.knowledge.writeBatch(batch(1));
    await new Promise((resolve) => setTimeout(resolve, 2_300));
    other.exec("COMMIT");
    await expect(slow).resolves.toEqual({ added: 1, updated: 0 });
    other.exec("BEGIN IMMEDIATE");
    let settled = false;
    const next = storage.knowledge.writeBatch(batch(2)).finally(() => (settled = true));
    for (let turns = 0; turns < 20; turns++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(settled).toBe(false);
    other.exec("COMMIT");
    await expect(next).resolves.toEqual({ added: 1, updated: 0 });
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

  it("let a chat turn's writes wait for the writer thread's transaction without holding the event loop, then store them", async () => {
    // On this thread, the writes would wait inside SQLite's busy handler (blocking the event loop, so the COMMIT below never comes) and fail after it.
    const { storage, org, bot, other, batch } = await open(2_000);
    // Two writes in a row: the second and later ones run on the writer thread.
    await storage.knowledge.writeBatch(batch(0));
    await storage.knowledge.writeBatch(batch(1));
    const event = (): DomainEvent => ({ name: "message_received", organizationId: org.id, data: {} as never });
    const conversation = (session_id: string) =>
      storage.conversations.start(
        newConversation(bot, session_id, NOW),
        event,
      );
    const { result: first } = await conversation("api_first");
    // The writer's next transaction waits behind another connection's lock, holding the gate meanwhile.
    other.exec("BEGIN IMMEDIATE");
    const written = storage.knowledge.writeBatch(batch(2));
    for (let turns = 0; turns < 10; turns++) await new Promise((resolve) => setTimeout(resolve, 5));
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 5);
    const turn = {
      user: { role: "user" as const, content: "question", created_at: NOW },
      assistant: { role: "assistant" as const, content: "<p>answer</p>", created_at: NOW },
      charge: { organization_id: org.id, month: "2026-01", cost: 1 },
    };
    let ticksWhenStored = 0;
    const stored = storage.conversations.storeTurn({ id: first.id, chatbot_id: bot.id }, turn, event).finally(() => (ticksWhenStored = ticks));
    const second = conversation("api_second");
    setTimeout(() => other.exec("COMMIT"), 300);
    try {
      await expect(written).resolves.toEqual({ added: 1, updated: 0 });
      expect("refused" in (await stored)).toBe(false);
      expect((await second).result.session_id).toBe("api_second");
    } finally {
      clearInterval(ticking);
    }
    expect(ticksWhenStored).toBeGreaterThan(0);
    expect((await storage.conversations.messages(first.id)).map((m) => m.content)).toEqual(["question", "<p>answer</p>"]);
  });

  it("let a request's other writes (idempotency key, lead, health probe, lease, a web page's check) wait for the writer thread's transaction without holding the event loop, then store them", async () => {
    // On this thread, each would wait inside SQLite's busy handler (blocking the event loop, so the COMMIT below never comes) and fail after it.
    const { storage, org, bot, other, batch } = await open(2_000);
    await storage.knowledge.writeBatch(batch(0));
    await storage.knowledge.writeBatch(batch(1));
    const { result: conversation } = await storage.conversations.start(
      newConversation(bot, "api_lead", NOW),
      () => ({ name: "conversation_started", organizationId: org.id, data: {} as never }),
    );
    const page = (await storage.knowledge.documents(bot.id))[0]!;
    // The writer's next transaction waits behind another connection's lock, holding the gate meanwhile.
    other.exec("BEGIN IMMEDIATE");
    const written = storage.knowledge.writeBatch(batch(2));
    for (let turns = 0; turns < 10; turns++) await new Promise((resolve) => setTimeout(resolve, 5));
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 5);
    const landed: Record<string, number> = {};
    const noted = <T>(name: string, write: Promise<T>) => write.finally(() => (landed[name] = ticks));
    const writes = Promise.all([
      noted("claim", storage.idempotency.claim(org.id, "retry-1", "f1", { now: NOW, expiredBefore: "2025-01-01", staleBefore: "2025-01-01" })).then(async (claim) => {
        await noted("complete", storage.idempotency.complete(org.id, "retry-1", "f1", 200, "{}"));
        return claim;
      }),
      noted("lead", storage.leads.capture({ organization_id: org.id, chatbot_id: bot.id, conversation_id: conversation.id, name: null, email: "ana@example.com", phone: null, message: null, source: "api", source_url: null, created_at: NOW }, (lead) => ({ name: "lead_captured", organizationId: org.id, data: lead as never }))),
      noted("probe", storage.probeWrite()),
      noted("lease", storage.leases.acquire("sync", "me", { ttlMs: 60_000 })),
      noted("fetched", storage.knowledge.markFetched(bot.id, page.id, { etag: "v2", last_modified: null, fetched_at: NOW })),
    ]);
    setTimeout(() => other.exec("COMMIT"), 300);
    try {
      await expect(written).resolves.toEqual({ added: 1, updated: 0 });
      const [claim, lead, , lease, fetched] = await writes;
      expect(claim).toEqual({ claimed: true });
      expect(lead.result.email).toBe("ana@example.com");
      expect(lease).toBe(true);
      expect(fetched).toBe(true);
    } finally {
      clearInterval(ticking);
    }
    for (const name of ["claim", "complete", "lead", "probe", "lease", "fetched"]) expect({ name, ticks: landed[name]! > 0 }).toEqual({ name, ticks: true });
    expect((await storage.idempotency.claim(org.id, "retry-1", "f1", { now: NOW, expiredBefore: "2025-01-01", staleBefore: "2025-01-01" })).claimed).toBe(false);
    expect(other.prepare("SELECT etag FROM documents WHERE id = ?").get(page.id)).toEqual({ etag: "v2" });
  });
});
