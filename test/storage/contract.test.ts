// The behaviour every storage engine must share, run against each engine through
// core/storage's interfaces only. An engine joins by adding an entry to ENGINES.
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { DomainEvent, EventName } from "../../src/core/events.js";
import type { NewConversation, Storage, StorageOptions } from "../../src/core/storage/index.js";
import { openPostgresStorage } from "../../src/storage/postgres/index.js";
import { openSqliteStorage } from "../../src/storage/sqlite/index.js";
import { encodeWebhookEvent } from "../../src/webhooks/index.js";
import { testDatabase, testEngine } from "../support/database.js";
import { tempDir } from "../support/harness.js";
import { newConversation, seedTenant } from "../support/storage-seed.js";
import { questionKey } from "../../src/analytics/questions.js";

const SQLITE = {
  name: "sqlite",
  async open(options: StorageOptions): Promise<Storage> {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    return openSqliteStorage(join(dir.dir, "contract.db"), options);
  },
};

const POSTGRES = {
  name: "postgres",
  async open(options: StorageOptions): Promise<Storage> {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const database = await testDatabase(dir.dir);
    cleanups.push(database.drop);
    return openPostgresStorage(database.options.database!, options);
  },
};

// Each vitest project runs the contract on its engine (the postgres project clones a migrated database).
const ENGINES: { name: string; open(options: StorageOptions): Promise<Storage> }[] = [testEngine === "postgres" ? POSTGRES : SQLITE];

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const NOW = "2026-01-02T03:04:05.000Z";

describe.each(ENGINES)("storage contract: $name", (engine) => {
  /** A storage with one organisation (credits `monthly`), one chatbot and one open conversation. */
  async function seeded(monthly = 100) {
    const storage = await engine.open({ encodeEvent: encodeWebhookEvent, questionKey });
    cleanups.push(() => storage.close());
    const { org, bot } = await seedTenant(storage, { credits: monthly, at: NOW });
    const conversation = (values: Partial<NewConversation> = {}): NewConversation =>
      newConversation(bot, `api_${Math.random().toString(36).slice(2)}`, NOW, values);
    const started: (c: { id: number }) => DomainEvent = (c) => ({ name: "message_received", organizationId: org.id, data: { id: c.id } as never });
    const { result: open } = await storage.conversations.start(conversation(), started);
    const subscribe = (events: EventName[], url = "https://a.example/") =>
      storage.webhooks.register({ organization_id: org.id, url, events, name: null, default_name: "h", secret: "whsec_x", now: NOW });
    /** Claims (leases) up to `limit` outbox rows due now. */
    const claimDue = (limit = 10) => {
      const now = Date.now() + 10;
      return storage.outbox.settle([], { now, limit, leaseUntil: now + 60_000 });
    };
    return { storage, org, bot, open, conversation, started, subscribe, claimDue };
  }

  const turn = (orgId: number, i = 0) => ({
    user: { role: "user" as const, content: `question ${i}`, created_at: NOW },
    assistant: { role: "assistant" as const, content: `<p>answer ${i}</p>`, created_at: NOW },
    charge: { organization_id: orgId, month: "2026-01", cost: 1 },
  });

  it("stores a turn with its charge, and never spends more credits than there are, however many turns race", async () => {
    const { storage, org, bot, open } = await seeded(5);
    const event = ({ user }: { user: { id: number } }): DomainEvent => ({ name: "message_received", organizationId: org.id, data: { id: user.id } as never });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => storage.conversations.storeTurn({ id: open.id, chatbot_id: bot.id }, turn(org.id, i), event)));
    const stored = results.filter((r) => !("refused" in r));
    expect(stored).toHaveLength(5);
    expect(results.filter((r) => "refused" in r && r.refused === "credits")).toHaveLength(7);
    expect(await storage.credits.status(org.id, "2026-01")).toEqual({ month: "2026-01", credits_used: 5, credits_max: 5 });
    expect(await storage.conversations.countMessages(open.id)).toBe(10);
  });

  it("keeps each turn's question and answer together when turns of one conversation race, and answers them as stored", async () => {
    const { storage, org, bot, open } = await seeded();
    const event = ({ user }: { user: { id: number } }): DomainEvent => ({ name: "message_received", organizationId: org.id, data: { id: user.id } as never });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => storage.conversations.storeTurn({ id: open.id, chatbot_id: bot.id }, turn(org.id, i), event)));
    const rows = await storage.conversations.messages(open.id);
    expect(rows.map((r) => r.role)).toEqual(Array.from({ length: 10 }, () => ["user", "assistant"]).flat());
    for (let n = 0; n < rows.length; n += 2) expect(rows[n + 1]!.content).toBe(`<p>answer ${rows[n]!.content.split(" ")[1]}</p>`);
    for (const result of results) {
      if ("refused" in result) throw new Error(`refused: ${result.refused}`);
      expect(result.result.user).toEqual(await storage.conversations.findMessage(open.id, result.result.user.id));
      expect(result.result.assistant).toEqual(await storage.conversations.findMessage(open.id, result.result.assistant.id));
      expect(result.result.conversation).toEqual({ ...(await storage.conversations.find(open.id)), last_message_at: NOW });
    }
  });

  it("fans a turn's message_received out with the visitor message's id, and the visitor's text as sent, whatever numbers it holds", async () => {
    const { storage, org, bot, open, subscribe, claimDue } = await seeded();
    await subscribe(["message_received"]);
    const event = ({ user }: { user: { id: number; content: string } }): DomainEvent => ({
      name: "message_received",
      organizationId: org.id,
      data: { id: user.id, content: user.content } as never,
    });
    // PostgreSQL encodes the payload before the message has its id, with a placeholder number: here the
    // first one drawn is in the visitor's text, so another must be drawn.
    const content = `Order ${2 ** 52} and ${2 ** 52 + 1}`;
    vi.spyOn(Math, "random").mockReturnValueOnce(0);
    const stored = await storage.conversations.storeTurn({ id: open.id, chatbot_id: bot.id }, { ...turn(org.id), user: { role: "user", content, created_at: NOW } }, event);
    vi.restoreAllMocks();
    if ("refused" in stored) throw new Error(`refused: ${stored.refused}`);
    expect(stored.events).toEqual([{ event: event(stored.result), deliveries: 1 }]);
    const [row] = await claimDue();
    expect(JSON.parse(row!.payload)).toEqual({ event: "message_received", data: { id: stored.result.user.id, content } });
  });

  it("counts a fallback turn in the day's analytics and lists its question among the unanswered", async () => {
    const { storage, org, bot, open } = await seeded();
    const event = () => ({ name: "message_received", organizationId: org.id, data: {} as never }) as DomainEvent;
    const modelTurn = (question: string, cannot_answer: boolean) => ({
      ...turn(org.id),
      user: { role: "user" as const, content: question, created_at: NOW },
      assistant: { role: "assistant" as const, content: "<p>reply</p>", model: "extractive", cannot_answer, created_at: NOW },
    });
    await storage.conversations.storeTurn({ id: open.id, chatbot_id: bot.id }, modelTurn("  Where is the refund form?  ", true), event);
    await storage.conversations.storeTurn({ id: open.id, chatbot_id: bot.id }, modelTurn("How do I install it?", false), event);
    const scope = { chatbot_ids: [bot.id], since: NOW, until: NOW };
    const [day] = await storage.analytics.daily(scope);
    expect(day).toMatchObject({ conversations: 1, visitor_messages: 2, answered: 1, cannot_answer: 1 });
    const unanswered = await storage.analytics.unanswered(scope);
    expect(unanswered).toMatchObject([{ question: "Where is the refund form?", key: questionKey("Where is the refund form?"), count: 1, cannot_answer: 1 }]);
  });

  it("refuses a turn for an aborted caller, another chatbot's conversation or an ended one, storing and charging nothing", async () => {
    const { storage, org, bot, open } = await seeded();
    const event = () => ({ name: "message_received", organizationId: org.id, data: {} as never }) as DomainEvent;
    const aborted = AbortSignal.abort();
    expect(await storage.conversations.storeTurn({ id: open.id, chatbot_id: bot.id, signal: aborted }, turn(org.id), event)).toEqual({ refused: "aborted" });
    expect(await storage.conversations.storeTurn({ id: open.id, chatbot_id: bot.id + 1 }, turn(org.id), event)).toEqual({ refused: "missing" });
    await storage.conversations.end(open.id, NOW, () => event());
    expect(await storage.conversations.storeTurn({ id: open.id, chatbot_id: bot.id }, turn(org.id), event)).toEqual({ refused: "ended" });
    expect((await storage.credits.status(org.id, "2026-01"))!.credits_used).toBe(0);
    expect(await storage.conversations.countMessages(open.id)).toBe(0);
  });

  it("stores a turn racing the conversation's end before the end, or refuses it as ended and charges nothing", async () => {
    const { storage, org, bot, conversation, started } = await seeded();
    const event = () => ({ name: "message_received", organizationId: org.id, data: {} as never }) as DomainEvent;
    let stored = 0;
    for (let i = 0; i < 12; i++) {
      const { result: c } = await storage.conversations.start(conversation(), started);
      const [turned, ended] = await Promise.all([
        storage.conversations.storeTurn({ id: c.id, chatbot_id: bot.id }, turn(org.id, i), event),
        storage.conversations.end(c.id, NOW, () => ({ name: "conversation_ended", organizationId: org.id, data: {} as never })),
      ]);
      if ("refused" in turned) {
        expect(turned).toEqual({ refused: "ended" });
        expect(ended!.result.message_count).toBe(0);
      } else {
        stored++;
        expect(ended!.result.message_count).toBe(2);
      }
      expect(await storage.conversations.countMessages(c.id)).toBe(ended!.result.message_count);
    }
    expect((await storage.credits.status(org.id, "2026-01"))!.credits_used).toBe(stored);
  });

  it("ends a conversation once: a second end records no event", async () => {
    const { storage, org, open } = await seeded();
    const event = () => ({ name: "conversation_ended", organizationId: org.id, data: {} as never }) as DomainEvent;
    const [a, b] = await Promise.all([storage.conversations.end(open.id, NOW, event), storage.conversations.end(open.id, "2030-01-01T00:00:00.000Z", event)]);
    expect([a!.result.closed_here, b!.result.closed_here].sort()).toEqual([false, true]);
    expect(a!.events.length + b!.events.length).toBe(1);
    expect(a!.result.conversation.ended_at).toBe(b!.result.conversation.ended_at);
  });

  it("starts conversations at once with their events: each answered as stored, with its own outbox row, counted once for its day", async () => {
    const { storage, org, bot, conversation, subscribe, claimDue } = await seeded();
    await subscribe(["conversation_started"]);
    const event = (c: { id: number }): DomainEvent => ({ name: "conversation_started", organizationId: org.id, data: { id: c.id } as never });
    const starts = await Promise.all(Array.from({ length: 20 }, (_, i) => storage.conversations.start(conversation({ visitor_id: `v${i}`, metadata: `{"n":${i}}` }), event)));
    for (const { result, events } of starts) {
      expect(result).toEqual(await storage.conversations.find(result.id));
      expect(events).toEqual([{ event: event(result), deliveries: 1 }]);
    }
    const claimed = await claimDue(50);
    expect(claimed.map((row) => JSON.parse(row.payload).data.id).sort()).toEqual(starts.map((s) => s.result.id).sort());
    // The one seeded() started, and these 20.
    const [day] = await storage.analytics.daily({ chatbot_ids: [bot.id], since: NOW, until: NOW });
    expect(day!.conversations).toBe(21);
  });

  it("starts nothing for a chatbot that is gone: no conversation, no outbox rows", async () => {
    const { storage, org, conversation, subscribe, claimDue } = await seeded();
    await subscribe(["conversation_started"]);
    const event = (c: { id: number }): DomainEvent => ({ name: "conversation_started", organizationId: org.id, data: { id: c.id } as never });
    await expect(storage.conversations.start(conversation({ chatbot_id: 999_999 }), event)).rejects.toThrow();
    expect(await claimDue()).toEqual([]);
  });

  it("rolls a write back when its event cannot be built: no row, no outbox rows", async () => {
    const { storage, conversation, claimDue } = await seeded();
    const fail = () => {
      throw new Error("the change failed");
    };
    await expect(storage.conversations.start(conversation({ session_id: "api_rolled_back" }), fail)).rejects.toThrow("the change failed");
    expect(await claimDue()).toEqual([]);
  });

  it("fans an event out to the organisation's active subscribed webhooks; claims lease rows; finished rows are not claimed again", async () => {
    const { storage, org, subscribe } = await seeded();
    await subscribe(["lead_captured"]);
    await subscribe(["message_received"], "https://b.example/");
    const recorded = await storage.outbox.record({ name: "lead_captured", organizationId: org.id, data: { id: 1 } as never });
    expect(recorded.deliveries).toBe(1);
    expect((await storage.outbox.record({ name: "lead_captured", organizationId: org.id + 1, data: { id: 2 } as never })).deliveries).toBe(0);

    const now = Date.now() + 10;
    const claimed = await storage.outbox.settle([], { now, limit: 10, leaseUntil: now + 60_000 });
    expect(claimed).toHaveLength(1);
    expect(JSON.parse(claimed[0]!.payload)).toEqual({ event: "lead_captured", data: { id: 1 } });
    // Leased: nobody else claims it until the lease runs out.
    expect(await storage.outbox.settle([], { now, limit: 10, leaseUntil: now + 60_000 })).toEqual([]);
    const row = claimed[0]!;
    await storage.outbox.settle(
      [{ delivery_id: row.id, webhook_id: row.webhook_id, status: "delivered", attempts: 1, next_attempt_at: now, http_status: 200, error: null, first_attempt: true, gone: false, now: NOW }],
      { now: now + 120_000, limit: 10, leaseUntil: now + 180_000 },
    );
    expect(await storage.outbox.settle([], { now: now + 240_000, limit: 10, leaseUntil: now + 300_000 })).toEqual([]);
    expect((await storage.webhooks.find(row.webhook_id))!.total_triggers).toBe(1);
  });

  it("counts each stored reply's citations once per document name, regenerated replies included; messages without sources count nothing", async () => {
    const { storage, org, bot, open } = await seeded();
    const doc = (name: string) => ({ fields: { name, type: "file", source: `/${name}`, url: null, content_hash: name, chunk_count: 1, bytes: 1, etag: null, last_modified: null, fetched_at: null }, chunks: [{ heading: "", content: name, vector: Float32Array.from([1, 0, 0, 0]) }] });
    await storage.knowledge.writeBatch({ chatbot_id: bot.id, embedder: { spec: "test", dimension: 4 }, documents: [doc("a.md"), doc("b.md"), doc("never.md")], now: NOW });
    const event = () => ({ name: "message_received", organizationId: org.id, data: {} as never }) as DomainEvent;
    const cited = (...names: string[]) => JSON.stringify(names.map((name) => ({ name, type: "file", score: 0.5 })));
    const first = turn(org.id, 1);
    // Two documents of one name in one reply are one citation of that name.
    const stored = await storage.conversations.storeTurn({ id: open.id, chatbot_id: bot.id }, { ...first, assistant: { ...first.assistant, sources: cited("a.md", "a.md", "b.md") } }, event);
    if ("refused" in stored) throw new Error(stored.refused);
    const later = "2026-01-03T00:00:00.000Z";
    const regenerated = await storage.conversations.storeRegeneration({ id: open.id, chatbot_id: bot.id }, stored.result.assistant.id, { role: "assistant", content: "<p>again</p>", sources: cited("a.md"), created_at: later }, first.charge);
    expect("refused" in regenerated).toBe(false);
    await storage.conversations.storeMessage({ id: open.id, organization_id: org.id }, { role: "assistant", content: "<p>operator</p>", created_at: later });
    const rows = await storage.analytics.citations([bot.id]);
    expect(rows.map((r) => [r.name, r.cited, r.last_cited_at])).toEqual([
      ["a.md", 2, later],
      ["b.md", 1, NOW],
      ["never.md", 0, null],
    ]);
  });

  it("replaces a document by source, finds it by full text, knows its words, and moves the vector revision on removal", async () => {
    const { storage, bot } = await seeded();
    const vector = (x: number) => Float32Array.from([x, 1 - x, 0, 0]);
    const batch = (content: string) => ({
      chatbot_id: bot.id,
      embedder: { spec: "test", dimension: 4 },
      documents: [{ fields: { name: "a", type: "file", source: "/a.md", url: null, content_hash: content, chunk_count: 1, bytes: content.length, etag: null, last_modified: null, fetched_at: null }, chunks: [{ heading: "", content, vector: vector(0.5) }] }],
      now: NOW,
    });
    expect(await storage.knowledge.writeBatch(batch("Zebras graze by the lake."))).toEqual({ added: 1, updated: 0 });
    expect(await storage.knowledge.writeBatch(batch("Giraffes browse the acacia."))).toEqual({ added: 0, updated: 1 });
    expect(await storage.knowledge.fullText(bot.id, ["zebras"], 5)).toEqual([]);
    const [hit] = await storage.knowledge.fullText(bot.id, ["giraffes"], 5);
    expect((await storage.knowledge.chunks([hit!]))[0]!.content).toBe("Giraffes browse the acacia.");
    expect(await storage.knowledge.knownWords(["acacia", "zebras"])).toEqual(["acacia"]);
    expect(await storage.knowledge.fullText(bot.id, ['"', "AND", "NEAR("], 5)).toEqual([]);
    expect(await storage.knowledge.embedder()).toEqual({ spec: "test", dimension: 4 });

    const before = await storage.knowledge.vectorState(bot.id);
    const [doc] = await storage.knowledge.documents(bot.id);
    expect(await storage.knowledge.removeDocument(bot.id, doc!.id)).toBe(true);
    const after = await storage.knowledge.vectorState(bot.id);
    expect(after.max_id).toBeNull();
    expect(after.revision).toBeGreaterThan(before.revision);
    expect(await storage.knowledge.hasChunks(bot.id)).toBe(false);
  });

  it("reads chunks with the vectors asked for, and vectors with the chatbot's vector state of the same moment", async () => {
    const { storage, bot } = await seeded();
    const chunk = (content: string, x: number) => ({ heading: "", content, vector: Float32Array.from([x, 1 - x, 0, 0]) });
    const fields = { name: "a", type: "file", source: "/a.md", url: null, content_hash: "h", chunk_count: 2, bytes: 1, etag: null, last_modified: null, fetched_at: null };
    await storage.knowledge.writeBatch({ chatbot_id: bot.id, embedder: { spec: "test", dimension: 4 }, documents: [{ fields, chunks: [chunk("one", 0.25), chunk("two", 0.75)] }], now: NOW });
    const [one, two] = (await storage.knowledge.chunksOfChatbot(bot.id)).map((c) => c.id);

    const rows = await storage.knowledge.chunks([one!, two!], [two!]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(one!)!.vector).toBeUndefined();
    expect([...byId.get(two!)!.vector!]).toEqual([0.75, 0.25, 0, 0]);
    expect(byId.get(two!)!.content).toBe("two");

    const read = await storage.knowledge.vectorsOf(bot.id, [one!, two! + 1000]);
    expect(read.vectors.map(([id, v]) => [id, [...v]])).toEqual([[one, [0.25, 0.75, 0, 0]]]);
    expect(read.state).toEqual(await storage.knowledge.vectorState(bot.id));
    expect((await storage.knowledge.vectorsOf(bot.id, [])).state.max_id).toBe(two);

    const [doc] = await storage.knowledge.documents(bot.id);
    await storage.knowledge.removeDocument(bot.id, doc!.id);
    const gone = await storage.knowledge.vectorsOf(bot.id, [one!]);
    expect(gone.vectors).toEqual([]);
    expect(gone.state.max_id).toBeNull();
    expect(gone.state.revision).toBeGreaterThan(read.state.revision);
  });

  it("pages through a chatbot's document sources and content hashes, oldest first", async () => {
    const { storage, bot } = await seeded();
    const doc = (name: string) => ({ fields: { name, type: "file", source: `/${name}`, url: null, content_hash: `hash-${name}`, chunk_count: 1, bytes: 1, etag: null, last_modified: null, fetched_at: null }, chunks: [{ heading: "", content: name, vector: Float32Array.from([1, 0, 0, 0]) }] });
    await storage.knowledge.writeBatch({ chatbot_id: bot.id, embedder: { spec: "test", dimension: 4 }, documents: ["a", "b", "c"].map(doc), now: NOW });
    const first = await storage.knowledge.documentHashes(bot.id, 0, 2);
    expect(first.map(({ source, content_hash }) => [source, content_hash])).toEqual([["/a", "hash-a"], ["/b", "hash-b"]]);
    const rest = await storage.knowledge.documentHashes(bot.id, first[1]!.id, 2);
    expect(rest.map((d) => d.source)).toEqual(["/c"]);
    expect(await storage.knowledge.documentHashes(bot.id + 1, 0, 2)).toEqual([]);
  });

  it("keeps the first of racing install secrets and idempotency claims", async () => {
    const { storage, org } = await seeded();
    const secrets = await Promise.all(["one", "two", "three"].map((v) => storage.settings.putIfAbsent("widget_secret", v)));
    expect(new Set(secrets).size).toBe(1);
    const at = { now: NOW, expiredBefore: "2025-01-01T00:00:00.000Z", staleBefore: "2025-01-01T00:00:00.000Z" };
    const claims = await Promise.all([1, 2, 3].map(() => storage.idempotency.claim(org.id, "key-1", "fp", at)));
    expect(claims.filter((c) => c.claimed)).toHaveLength(1);
  });

  it("gives a job's lease to one holder at a time, frees it on release or expiry, and waits out the interval after a completed run", async () => {
    const { storage } = await seeded();
    const hour = { ttlMs: 3_600_000 };
    const takes = await Promise.all(["a", "b", "c"].map((holder) => storage.leases.acquire("retention", holder, hour)));
    expect(takes.filter(Boolean)).toHaveLength(1);
    const winner = ["a", "b", "c"][takes.indexOf(true)];
    const loser = winner === "a" ? "b" : "a";
    expect(await storage.leases.acquire("retention", winner, hour)).toBe(true);
    expect(await storage.leases.acquire("retention", loser, hour)).toBe(false);
    expect(await storage.leases.acquire("sync", loser, hour)).toBe(true);

    await storage.leases.release("retention", loser);
    expect(await storage.leases.acquire("retention", loser, hour)).toBe(false);
    await storage.leases.release("retention", winner, true);
    expect(await storage.leases.acquire("retention", loser, { ...hour, minIntervalMs: 3_600_000 })).toBe(false);
    expect(await storage.leases.acquire("retention", loser, { ...hour, minIntervalMs: 0 })).toBe(true);

    // A holder that died: its lease lapses after its ttl and another takes it over.
    expect(await storage.leases.acquire("reindex", "dead", { ttlMs: 0 })).toBe(true);
    expect(await storage.leases.acquire("reindex", "alive", hour)).toBe(true);
  });
});
