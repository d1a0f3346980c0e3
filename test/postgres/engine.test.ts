import { createHash } from "node:crypto";
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import type { DomainEvent } from "../../src/core/events.js";
import type { AttemptRecord, ChatbotRecord } from "../../src/core/storage/index.js";
import { migratePostgres, openPostgresStorage, type PostgresStorage } from "../../src/storage/postgres/index.js";
import { newConversation, seedTenant } from "../support/storage-seed.js";
import { cloneTestDatabase, databaseUrl, testDatabaseUrl, withAdmin } from "../support/postgres.js";
import { questionKey } from "../../src/analytics/questions.js";

/*
 * What only a shared PostgreSQL database must guarantee: several instances (here,
 * several storages with their own pools on one database) migrating, charging,
 * claiming and caching side by side.
 */

const encodeEvent = (name: string, data: unknown) => JSON.stringify({ event: name, data });
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let lastUrl = "";
async function instances(n: number): Promise<PostgresStorage[]> {
  const db = await cloneTestDatabase(testDatabaseUrl(), inject("pgTemplate"));
  lastUrl = db.url;
  cleanups.push(db.drop);
  const opened = await Promise.all(Array.from({ length: n }, () => openPostgresStorage(db.url, { encodeEvent, questionKey, poolSize: 4 })));
  for (const s of opened) cleanups.push(() => s.close());
  return opened;
}

const now = () => new Date().toISOString();

const tenant = (s: PostgresStorage, credits = 100) => seedTenant(s, { credits });

async function conversation(s: PostgresStorage, bot: ChatbotRecord, session: string) {
  const started = await s.conversations.start(newConversation(bot, session, now()), (c) => ({ name: "conversation_started", organizationId: c.organization_id, data: { id: c.id } }) as DomainEvent);
  return started.result;
}

describe("PostgreSQL shared by several instances", () => {
  it("applies the migrations once when instances start together", async () => {
    const admin = testDatabaseUrl();
    const name = `${inject("pgTemplate")}_fresh_${process.pid}`;
    await withAdmin(admin, (c) => c.query(`CREATE DATABASE "${name}"`));
    cleanups.push(() => withAdmin(admin, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)));
    const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: databaseUrl(admin, name), max: 2 }));
    // Dropping the database ends idle connections; the pools must not take that as an uncaught error.
    for (const pool of pools) pool.on("error", () => {});
    cleanups.push(() => Promise.all(pools.map((p) => p.end())));
    await Promise.all(pools.map((p) => migratePostgres(p)));
    const applied = await pools[0]!.query("SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations");
    const journal = (await import("../../drizzle/postgres/meta/_journal.json", { with: { type: "json" } })).default;
    expect(applied.rows[0].n).toBe(journal.entries.length);
  });

  it("never charges past the monthly credits, whichever instance sends", async () => {
    const [a, b, c] = await instances(3);
    const { org, bot } = await tenant(a!, 10);
    const conversations = await Promise.all(Array.from({ length: 6 }, (_, i) => conversation(a!, bot, `s${i}`)));
    const month = now().slice(0, 7);
    const sends = Array.from({ length: 30 }, (_, i) =>
      [a, b, c][i % 3]!.conversations.storeTurn(
        { id: conversations[i % 6]!.id, chatbot_id: bot.id },
        {
          user: { role: "user", content: `q${i}`, created_at: now() },
          assistant: { role: "assistant", content: `a${i}`, created_at: now() },
          charge: { organization_id: org.id, month, cost: 1 },
        },
        ({ conversation: conv, user }) => ({ name: "message_received", organizationId: conv.organization_id, data: { id: user.id } }) as DomainEvent,
      ),
    );
    const results = await Promise.all(sends);
    expect(results.filter((r) => "result" in r)).toHaveLength(10);
    expect(results.filter((r) => "refused" in r && r.refused === "credits")).toHaveLength(20);
    expect((await b!.credits.status(org.id, month))!.credits_used).toBe(10);
    const stored = await Promise.all(conversations.map((conv) => c!.conversations.countMessages(conv.id)));
    expect(stored.reduce((x, y) => x + y, 0)).toBe(20);
  });

  it("hands each due delivery to one instance, and a dead instance's deliveries to another after the lease", async () => {
    const [a, b] = await instances(2);
    const { org, bot } = await tenant(a!);
    const hook = await a!.webhooks.register({ organization_id: org.id, url: "http://127.0.0.1:9/hook", events: ["conversation_started"], name: null, default_name: "hook", secret: "whsec_x", now: now() });
    expect(hook).not.toBe("no-organization");
    await Promise.all(Array.from({ length: 40 }, (_, i) => conversation(a!, bot, `c${i}`)));

    const t = Date.now();
    const claims = await Promise.all([a, b, a, b].map((s) => s!.outbox.settle([], { now: t, limit: 15, leaseUntil: t + 60_000 })));
    const ids = claims.flat().map((d) => d.id);
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);

    // Nothing is due while leased; once the lease has run out (the claimer died), another instance takes it over.
    expect(await b!.outbox.settle([], { now: t + 1_000, limit: 100, leaseUntil: t + 61_000 })).toEqual([]);
    const retaken = await b!.outbox.settle([], { now: t + 60_001, limit: 100, leaseUntil: t + 120_000 });
    expect(retaken).toHaveLength(40);

    // The late outcome of the first claim and the new claimer's outcome: the attempt is counted once.
    const outcome = (d: (typeof retaken)[number]): AttemptRecord => ({
      delivery_id: d.id,
      webhook_id: d.webhook_id,
      status: "delivered",
      attempts: d.attempts + 1,
      next_attempt_at: Date.now(),
      http_status: 200,
      error: null,
      first_attempt: true,
      gone: false,
      now: now(),
    });
    await b!.outbox.settle(retaken.map(outcome), { now: Date.now(), limit: 0, leaseUntil: 0 });
    await a!.outbox.settle(claims.flat().map(outcome), { now: Date.now(), limit: 0, leaseUntil: 0 });
    const counted = await a!.webhooks.find(typeof hook === "string" ? 0 : hook.webhook.id);
    expect(counted!.total_triggers).toBe(40);
  });

  it("wakes other instances' webhook workers once per burst, not once per event", async () => {
    const [a, b] = await instances(2);
    const { org, bot } = await tenant(a!);
    await a!.webhooks.register({ organization_id: org.id, url: "http://127.0.0.1:9/hook", events: ["conversation_started"], name: null, default_name: "hook", secret: "whsec_x", now: now() });
    let wakes = 0;
    b!.watchOutbox(() => wakes++);
    await expect.poll(() => wakes, { timeout: 2_000 }).toBe(1); // the wake-up every new listener gets
    const started = performance.now();
    await Promise.all(Array.from({ length: 20 }, (_, i) => conversation(a!, bot, `n${i}`)));
    const burstMs = performance.now() - started;
    await expect.poll(() => wakes, { timeout: 1_000, interval: 20 }).toBeGreaterThan(1);
    await new Promise((r) => setTimeout(r, 200));
    // At most one NOTIFY per 50 ms window the burst's commits spanned (a slow machine spreads them over more windows).
    expect(wakes - 1).toBeLessThanOrEqual(Math.min(19, Math.ceil(burstMs / 50) + 1));
  });

  it("shows another instance's knowledge and key changes within a second", async () => {
    const [a, b] = await instances(2);
    const { org, bot } = await tenant(a!);
    const keysBefore = b!.changes.version("keys");
    const before = await b!.knowledge.vectorState(bot.id);
    expect(before.max_id).toBeNull();

    await a!.knowledge.writeBatch({
      chatbot_id: bot.id,
      embedder: { spec: "hash", dimension: 2 },
      now: now(),
      documents: [
        {
          fields: { name: "Refunds", type: "file", source: "/refunds.md", url: null, content_hash: "h", chunk_count: 1, bytes: 10, etag: null, last_modified: null, fetched_at: null },
          chunks: [{ heading: "Refunds", content: "Ask for a refund of an invoice", vector: new Float32Array([1, 0]) }],
        },
      ],
    });
    const added = await b!.knowledge.vectorState(bot.id);
    expect(added.max_id).not.toBeNull();
    expect(await b!.knowledge.fullText(bot.id, ["refunds", "invoices"], 5)).toHaveLength(1);

    const [doc] = await a!.knowledge.documents(bot.id);
    await a!.knowledge.removeDocument(bot.id, doc!.id);
    const removed = await b!.knowledge.vectorState(bot.id);
    expect(removed.revision).not.toBe(added.revision);
    expect(await b!.knowledge.fullText(bot.id, ["refunds"], 5)).toEqual([]);

    const user = await a!.users.create({ organization_id: org.id, email: "o@acme.test", name: null, created_at: now() });
    const key = await a!.keys.create({ owner: { id: typeof user === "string" ? 0 : user.id }, name: "k", prefix: "sk_live_x", key_hash: "hash", expires_at: null, attribution_ip: null, now: now() }, { max: 5, now: now() });
    await a!.keys.disable(typeof key === "string" ? 0 : key.id);
    await expect.poll(() => b!.changes.version("keys"), { timeout: 1_000, interval: 50 }).not.toBe(keysBefore);
  });

  it("shares rate-limit buckets: a limit holds for the cluster, not once per instance", async () => {
    const [a, b, c] = await instances(3);
    const bucket = { capacity: 3, refillPerSecond: 3 / 60 };
    const started = performance.now();
    const decisions = await Promise.all(Array.from({ length: 9 }, (_, i) => [a, b, c][i % 3]!.rateLimits.take("ip:192.0.2.1", bucket)));
    const burstSeconds = (performance.now() - started) / 1000;
    expect(decisions.filter((d) => d.ok)).toHaveLength(3);
    const refused = decisions.find((d) => !d.ok)!;
    expect(refused).toMatchObject({ remaining: 0, ok: false });
    // One token per 20 s: a refused take waits up to that, less what refilled while the burst ran (a busy machine spreads it).
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(Math.min(15, 19 - Math.ceil(burstSeconds)));
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(20);
    // Another key has its own bucket.
    expect(await b!.rateLimits.take("ip:192.0.2.2", bucket)).toMatchObject({ ok: true, remaining: 2 });
  });

  it("refuses a take only when the bucket is empty, however concurrent takes reach the row: each refusal says to wait for a whole token", async () => {
    // Each take reads the clock, then may wait for the row behind takes that read it later.
    const [a, b, c] = await instances(3);
    const bucket = { capacity: 5, refillPerSecond: 5 / 100 };
    const holder = new pg.Client({ connectionString: lastUrl });
    await holder.connect();
    cleanups.push(() => holder.end());
    for (let round = 0; round < 5; round++) {
      const key = `ip:198.51.100.${round}`;
      // The takes read the clock and queue behind a held row lock, in whatever order they get there.
      await holder.query("BEGIN");
      await holder.query("INSERT INTO rate_buckets (key, tokens, updated_ms, full_ms, ok) VALUES ($1, 5, extract(epoch FROM clock_timestamp()) * 1000, 0, true)", [key]);
      const pending = Array.from({ length: 30 }, (_, i) => [a, b, c][i % 3]!.rateLimits.take(key, bucket));
      await new Promise((resolve) => setTimeout(resolve, 200));
      await holder.query("COMMIT");
      const decisions = await Promise.all(pending);
      expect(decisions.filter((d) => d.ok)).toHaveLength(5);
      // One token per 20 s: a refusal just after the burst waits most of that.
      for (const refused of decisions.filter((d) => !d.ok)) expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(15);
    }
  });

  it("takes a request's two buckets and reads the keys counter in one statement, as a key lookup reads it", async () => {
    const [a, b] = await instances(2);
    const { org } = await tenant(a!);
    const ip = { key: "api-ip:192.0.2.9", bucket: { capacity: 2, refillPerSecond: 2 / 60 } };
    const key = (id: string) => ({ key: `api-key:${id}`, bucket: { capacity: 5, refillPerSecond: 5 / 60 } });

    const counterOnly = await b!.rateLimits.takeForRequest([]);
    expect(counterOnly.decisions).toEqual([]);
    const first = await b!.rateLimits.takeForRequest([ip, key("1")]);
    expect(first.decisions).toMatchObject([{ ok: true, remaining: 1 }, { ok: true, remaining: 4 }]);
    expect(first.keysRevision).toBe(counterOnly.keysRevision);
    await b!.rateLimits.takeForRequest([ip, key("1")]);
    // The IP's bucket is spent: the key's is left alone, as two takes in a row would leave it.
    const refused = await a!.rateLimits.takeForRequest([ip, key("1")]);
    expect(refused.decisions).toMatchObject([{ ok: false, remaining: 0 }, undefined]);
    expect((await a!.rateLimits.takeForRequest([key("1")])).decisions).toMatchObject([{ ok: true, remaining: 2 }]);

    // A key change on A moves the counter B reads with its next take, and the lookup reads the same counter.
    const user = await a!.users.create({ organization_id: org.id, email: "r@acme.test", name: null, created_at: now() });
    const created = await a!.keys.create({ owner: { id: typeof user === "string" ? 0 : user.id }, name: "k", prefix: "sk_live_y", key_hash: "hash-r", expires_at: null, attribution_ip: null, now: now() }, { max: 5, now: now() });
    const afterCreate = await b!.rateLimits.takeForRequest([]);
    expect((await b!.keys.findByHash("hash-r"))!.revision).toBe(afterCreate.keysRevision);
    await a!.keys.disable(typeof created === "string" ? 0 : created.id);
    const afterDisable = await b!.rateLimits.takeForRequest([key("2")]);
    expect(afterDisable.keysRevision).toBeGreaterThan(afterCreate.keysRevision);
    expect((await b!.keys.findByHash("hash-r"))!).toMatchObject({ status: "disabled", revision: afterDisable.keysRevision });
  });

  it("counts widget budgets and claims idempotency keys once across instances", async () => {
    const [a, b, c] = await instances(3);
    const { org, bot } = await tenant(a!);
    const counters = [{ budget: "chatbot_per_hour" as const, subject: "", period: "2026-01-01T10:00:00.000Z", limit: 5 }];
    const reservations = await Promise.all(Array.from({ length: 12 }, (_, i) => [a, b, c][i % 3]!.widgetBudgets.reserve(bot.id, counters, now())));
    expect(reservations.filter((r) => r.ok)).toHaveLength(5);
    expect(reservations.filter((r) => !r.ok && r.first)).toHaveLength(1);

    const at = { now: now(), expiredBefore: "2000-01-01T00:00:00.000Z", staleBefore: "2000-01-01T00:00:00.000Z" };
    const claims = await Promise.all(Array.from({ length: 9 }, (_, i) => [a, b, c][i % 3]!.idempotency.claim(org.id, "key-1", "fp", at)));
    expect(claims.filter((r) => r.claimed)).toHaveLength(1);
  });

  it("leaves no pending full-text entries after an ingestion, so searches do not scan what it added", async () => {
    const db = await cloneTestDatabase(testDatabaseUrl(), inject("pgTemplate"));
    cleanups.push(db.drop);
    const s = await openPostgresStorage(db.url, { encodeEvent, questionKey, poolSize: 2 });
    cleanups.push(() => s.close());
    const { bot } = await tenant(s);
    const pending = () =>
      withAdmin(db.url, async (c) => {
        await c.query("CREATE EXTENSION IF NOT EXISTS pgstattuple");
        return (await c.query<{ n: number }>("SELECT pending_tuples::int AS n FROM pgstatginindex('chunks_search_idx')")).rows[0]!.n;
      });
    await s.knowledge.writeBatch({
      chatbot_id: bot.id,
      embedder: { spec: "hash", dimension: 2 },
      now: now(),
      documents: Array.from({ length: 40 }, (_, i) => ({
        fields: { name: `Page ${i}`, type: "file", source: `/p${i}.md`, url: null, content_hash: `h${i}`, chunk_count: 1, bytes: 40, etag: null, last_modified: null, fetched_at: null },
        chunks: [{ heading: `Topic ${i}`, content: `Zebra number ${i} grazes by the lake with word${i}`, vector: new Float32Array([1, 0]) }],
      })),
    });
    expect(await pending()).toBe(0);
    expect(await s.knowledge.fullText(bot.id, ["word7"], 5)).toHaveLength(1);
    expect(await s.knowledge.fullText(bot.id, ["zebras"], 50)).toHaveLength(40);
  });

  it("plans every full-text search for its own words and chatbot, never on a generic plan", async () => {
    const db = await cloneTestDatabase(testDatabaseUrl(), inject("pgTemplate"));
    cleanups.push(db.drop);
    // One connection: the statements it holds prepared are the ones the searches left.
    const s = await openPostgresStorage(db.url, { encodeEvent, questionKey, poolSize: 1 });
    cleanups.push(() => s.close());
    const { bot } = await tenant(s);
    await s.knowledge.writeBatch({
      chatbot_id: bot.id,
      embedder: { spec: "hash", dimension: 2 },
      now: now(),
      documents: [
        {
          fields: { name: "Refunds", type: "file", source: "/r.md", url: null, content_hash: "h", chunk_count: 1, bytes: 40, etag: null, last_modified: null, fetched_at: null },
          chunks: [{ heading: "Refunds", content: "Refunds reach the card within five days", vector: new Float32Array([1, 0]) }],
        },
      ],
    });
    // PostgreSQL turns a prepared statement to a generic plan after five runs.
    for (let i = 0; i < 8; i++) expect(await s.knowledge.fullText(bot.id, ["refunds", `word${i}`], 5)).toHaveLength(1);
    const prepared = (await s.db.$client.query<{ name: string }>("SELECT name FROM pg_prepared_statements")).rows.map((r) => r.name);
    expect(prepared).toContain("chatsvc_fulltext_frequencies");
    expect(prepared).not.toContain("chatsvc_fulltext_search");
  });

  it("keeps a chunk's full-text vector in its row, so ranking a search reads no TOAST", async () => {
    const db = await cloneTestDatabase(testDatabaseUrl(), inject("pgTemplate"));
    cleanups.push(db.drop);
    const s = await openPostgresStorage(db.url, { encodeEvent, questionKey, poolSize: 2 });
    cleanups.push(() => s.close());
    const { bot } = await tenant(s);
    // A chunk of ordinary size whose row (text and tsvector, neither compressible) outgrows the default TOAST threshold.
    const content = Array.from({ length: 120 }, (_, i) => `t${createHash("sha256").update(String(i)).digest("hex").slice(0, 9)}`).join(" ");
    await s.knowledge.writeBatch({
      chatbot_id: bot.id,
      embedder: { spec: "hash", dimension: 2 },
      now: now(),
      documents: [
        {
          fields: { name: "Terms", type: "file", source: "/t.md", url: null, content_hash: "h", chunk_count: 1, bytes: content.length, etag: null, last_modified: null, fetched_at: null },
          chunks: [{ heading: "Terms", content, vector: new Float32Array([1, 0]) }],
        },
      ],
    });
    const stored = await withAdmin(db.url, async (c) => {
      const toast = (await c.query<{ t: string }>("SELECT reltoastrelid::regclass::text AS t FROM pg_class WHERE relname = 'chunks'")).rows[0]!.t;
      return (await c.query<{ out: number; row: number }>(`SELECT (SELECT count(*) FROM ${toast})::int AS out, (SELECT octet_length(content) + pg_column_size(search) FROM chunks)::int AS row`)).rows[0]!;
    });
    expect(stored.row).toBeGreaterThan(2100);
    expect(stored.out).toBe(0);
    expect(await s.knowledge.fullText(bot.id, [content.split(" ")[7]!], 5)).toHaveLength(1);
  });

  // Its 23,000 rows go through the analytics counters' triggers: seconds on a quiet machine, past the default 20 s on a loaded one.
  it("reads a long conversation's latest messages from the end of an index, without sorting every message it holds", async () => {
    const db = await cloneTestDatabase(testDatabaseUrl(), inject("pgTemplate"));
    cleanups.push(db.drop);
    // One connection: the statement the read prepared is there to be explained.
    const s = await openPostgresStorage(db.url, { encodeEvent, questionKey, poolSize: 1 });
    cleanups.push(() => s.close());
    const { bot } = await tenant(s);
    const { id } = await conversation(s, bot, "long");
    // The analytics and unanswered-question triggers are not what is read here, and per row they were most of the test's time.
    await s.db.$client.query("ALTER TABLE messages DISABLE TRIGGER USER");
    await s.db.$client.query(
      "INSERT INTO messages (conversation_id, role, content, created_at) SELECT $1, CASE WHEN i % 2 = 1 THEN 'user' ELSE 'assistant' END, 'message ' || i, $2 FROM generate_series(1, 3000) i",
      [id, now()],
    );
    // Newer messages of another conversation: the latest of this one are not simply the table's last rows.
    const other = await conversation(s, bot, "other");
    await s.db.$client.query("INSERT INTO messages (conversation_id, role, content, created_at) SELECT $1, 'user', 'other ' || i, $2 FROM generate_series(1, 20000) i", [other.id, now()]);
    await s.db.$client.query("ALTER TABLE messages ENABLE TRIGGER USER");
    await s.db.$client.query("ANALYZE messages");
    const latest = await s.conversations.latestMessages(id, 24);
    expect(latest.map((m) => m.content)).toEqual(Array.from({ length: 24 }, (_, i) => `message ${3000 - i}`));
    const plan = JSON.stringify((await s.db.$client.query(`EXPLAIN (FORMAT JSON) EXECUTE chatsvc_messages_latest(${id}, 24, NULL)`)).rows);
    expect(plan).toContain("messages_conversation_order_idx");
    expect(plan).not.toContain('"Node Type":"Sort"');
  }, 60_000);

  it("answers full-text search for any visitor text without an error", async () => {
    const [a] = await instances(1);
    const { bot } = await tenant(a!);
    for (const words of [['"'], ["-(", "))"], ["or", "and", "<->", "!"], ["a:*", "b&c|d"], ["\\", "'", "%_"]]) {
      await expect(a!.knowledge.fullText(bot.id, words, 5)).resolves.toEqual([]);
    }
  });
});
