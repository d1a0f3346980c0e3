import { join } from "node:path";
import { getTableName, is } from "drizzle-orm";
import { PgTable } from "drizzle-orm/pg-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../src/index.js";
import { COPIED_TABLES, NOT_COPIED_TABLES } from "../../src/storage/copy.js";
import * as pgSchema from "../../src/storage/postgres/schema.js";
import { startServer, type RunningServer } from "../../src/http/server.js";
import { createChatService, type ChatService } from "../../src/service.js";
import { widgetSecret } from "../../src/http/widget/token.js";
import { DOCS } from "../chat/helpers.js";
import { runCli } from "../support/cli.js";
import { request, tempDir } from "../support/harness.js";
import { databaseUrl, testDatabaseUrl, withAdmin } from "../support/postgres.js";
import { eventually, startReceiver, type Receiver } from "../webhooks/support/receiver.js";

const webhooks = { allowPrivateNetworks: true, retryDelaysMs: [50, 50, 50] };
const admin = testDatabaseUrl();
const name = `scale_copy_${process.pid}`;
const target = databaseUrl(admin, name);
const { dir, cleanup } = tempDir();
const file = join(dir, "chatsvc.db");

interface Running {
  service: ChatService;
  server: RunningServer;
  call(path: string, init?: RequestInit & { json?: unknown }): ReturnType<typeof request>;
  close(): Promise<void>;
}

async function start(database: { db: string } | { database: string }, key: () => string): Promise<Running> {
  const service = await createChatService({ env: {}, logLevel: "warn", renderWorker: false, webhooks, ...database });
  const server = await startServer(service, { port: 0, onUnexpectedError: (e) => console.error(e) });
  return {
    service,
    server,
    call: (path, init = {}) => request(`${server.url}/api/v1${path}`, { ...init, key: key() }),
    async close() {
      await server.close();
      await service.close();
    },
  };
}

let receiver: Receiver;
let holdLead = true;

beforeAll(async () => {
  await withAdmin(admin, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${name}"`);
  });
  // The lead's delivery hangs until the SQLite service is gone: the copy carries it as a pending outbox row.
  receiver = await startReceiver((_n, entry) => (holdLead && entry.json?.event === "lead_captured" ? { hang: true } : {}));
});

afterAll(async () => {
  await receiver?.close();
  await withAdmin(admin, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  cleanup();
});

describe("chatsvc db copy", () => {
  it("copies every table of the schema or leaves it out on purpose: a new table cannot be forgotten", () => {
    const all = Object.values(pgSchema).filter((t) => is(t, PgTable)).map((t) => getTableName(t as PgTable));
    const decided = [...COPIED_TABLES, ...NOT_COPIED_TABLES].map((t) => getTableName(t));
    expect([...decided].sort()).toEqual([...all].sort());
  });

  it("moves a SQLite install whole: the same key, chunks, conversations, credits, secrets and pending deliveries on PostgreSQL", async () => {
    let key = "";
    const before = await start({ db: file }, () => key);
    const tenant = await before.service.bootstrap({ organizationName: "Acme", email: "owner@acme.test" });
    key = tenant.key.key;
    await before.service.knowledge.ingest("demo", DOCS);
    const hook = (await before.call("/webhooks", { json: { url: `${receiver.url}/hook`, events: ["message_received", "lead_captured"] } })).body.data;
    const conversationId = (await before.call("/chatbots/demo/conversations", { json: { visitor_name: "Ada" } })).body.data.conversation_id;
    const messages = `/chatbots/demo/conversations/${conversationId}/messages`;
    const first = await before.call(messages, { json: { message: "How much is the Pro plan?" }, headers: { "idempotency-key": "first-question" } });
    const second = await before.call(messages, { json: { message: "How do I install Widgetron?" } });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect((await before.call(`${messages}/rate`, { json: { message_id: first.body.data.message_id, rating: "good" } })).status).toBe(200);
    expect((await before.call(`${messages}/rate`, { json: { message_id: second.body.data.message_id, rating: "bad" } })).status).toBe(200);
    expect((await before.call(`/chatbots/demo/conversations/${conversationId}/leads`, { json: { name: "Ada", email: "ada@example.com" } })).status).toBe(201);
    expect((await before.call("/chatbots/demo/widget-budget", { method: "PUT", json: { visitor_per_day: 7 } })).status).toBe(200);
    const correction = await before.call("/chatbots/demo/corrections", { json: { question: "Do you ship to Canada?", answer: "Yes, in 5 days.", source_name: "Shipping" } });
    expect(correction.status).toBe(201);
    await receiver.waitFor(3); // two message_received delivered, the lead's attempt hanging
    // An erasure that found nothing still leaves its audit row; retention is an organisation setting.
    expect((await before.call("/visitors?visitor_id=someone-else", { method: "DELETE" })).status).toBe(200);
    await before.service.orgs.update(tenant.organization.id, { retention_days: 30 });
    const secret = await widgetSecret(before.service);

    const seen = {
      auth: (await before.call("/auth/test")).body.data,
      hits: await before.service.knowledge.search("demo", "Pro plan price per month"),
      conversations: (await before.call("/conversations")).body.data,
      conversation: (await before.call(`/conversations/${conversationId}`)).body.data,
      leads: (await before.call("/leads")).body.data,
      credits: await before.service.credits.status(tenant.organization.id),
      budget: (await before.call("/chatbots/demo/widget-budget")).body.data,
      analytics: (await before.call("/analytics?chatbot=demo")).body.data,
      // Whole days are read from counters, which the target rebuilds from the copied rows.
      analyticsToday: (await before.call(`/analytics?since=${new Date().toISOString().slice(0, 10)}&until=${new Date().toISOString().slice(0, 10)}`)).body.data,
      sources: (await before.call("/analytics/sources?chatbot=demo&per_page=100")).body.data,
      // Rebuilt too: the target's triggers add the copied replies' rows, its first report keys them.
      unanswered: (await before.call("/analytics/unanswered?chatbot=demo")).body.data,
      audit: (await before.call("/audit")).body.data,
      org: await before.service.orgs.get(tenant.organization.id),
      corrections: (await before.call("/chatbots/demo/corrections")).body.data,
    };
    expect(seen.sources.some((s: { cited: number }) => s.cited > 0)).toBe(true);
    expect(seen.unanswered).toMatchObject([{ question: "How do I install Widgetron?", count: 1, bad_ratings: 1 }]);
    expect(seen.hits.length).toBeGreaterThan(0);
    await before.close();
    holdLead = false;

    const copy = await runCli(["--db", file, "db", "copy", "--to", target, "--json"]);
    expect(copy.stderr).toBe("");
    expect(copy.code).toBe(0);
    const copied = copy.json();
    expect(copied.to).toBe(target);
    expect(copied.tables).toMatchObject({ organizations: 1, users: 1, api_keys: 1, chatbots: 1, conversations: 1, messages: 4, leads: 1, credit_ledger: 1, webhooks: 1, webhook_deliveries: 3, settings: 2, widget_budgets: 1, idempotency_keys: 1, audit_log: 1, corrections: 1 });
    expect(copied.tables.documents).toBeGreaterThan(DOCS.length); // the demo docs first-run setup ingests, and ours
    expect(copied.tables.chunks).toBeGreaterThan(1);
    expect(copied.tables.chunk_embeddings).toBe(copied.tables.chunks);
    expect(copied.tables.source_citations).toBe(seen.sources.filter((s: { cited: number }) => s.cited > 0).length);

    const after = await start({ database: target }, () => key);
    try {
      // The pending delivery goes out from PostgreSQL, with the webhook-id of its cut-off attempt and the same secret.
      const leadAttempts = await eventually(() => {
        const got = receiver.received.filter((r) => r.json?.event === "lead_captured");
        return got.length === 2 && got;
      });
      expect(leadAttempts[1]!.headers["webhook-id"]).toBe(leadAttempts[0]!.headers["webhook-id"]);
      expect(verifyWebhook(hook.secret, leadAttempts[1]!.headers, leadAttempts[1]!.body)).toBe(true);

      expect((await after.call("/auth/test")).body.data).toEqual(seen.auth);
      // The same chunks and vectors answer the same: the best hit, and every hit from our documents. Weaker hits from the
      // demo docs near the threshold depend on which candidates each engine's full text ranks first (FTS5's BM25, ts_rank).
      const hits = await after.service.knowledge.search("demo", "Pro plan price per month");
      const ours = (list: typeof hits) => list.filter((hit) => DOCS.some((doc) => doc.name === hit.name));
      expect(hits[0]).toEqual(seen.hits[0]);
      expect(ours(seen.hits).length).toBeGreaterThan(0);
      expect(ours(hits)).toEqual(ours(seen.hits));
      expect((await after.call("/conversations")).body.data).toEqual(seen.conversations);
      expect((await after.call(`/conversations/${conversationId}`)).body.data).toEqual(seen.conversation);
      expect((await after.call("/leads")).body.data).toEqual(seen.leads);
      expect(await after.service.credits.status(tenant.organization.id)).toEqual(seen.credits);
      expect((await widgetSecret(after.service)).equals(secret)).toBe(true);
      expect((await after.call("/chatbots/demo/widget-budget")).body.data).toEqual(seen.budget);
      expect((await after.call(`/analytics?chatbot=demo&since=${seen.analytics.since}&until=${seen.analytics.until}`)).body.data).toEqual(seen.analytics);
      expect((await after.call(`/analytics?since=${seen.analyticsToday.since.slice(0, 10)}&until=${seen.analyticsToday.since.slice(0, 10)}`)).body.data).toEqual(seen.analyticsToday);
      expect(seen.analyticsToday.totals).toMatchObject({ conversations: 1, visitor_messages: 2, good_ratings: 1, bad_ratings: 1, leads: 1 });
      expect((await after.call("/analytics/sources?chatbot=demo&per_page=100")).body.data).toEqual(seen.sources);
      expect((await after.call(`/analytics/unanswered?chatbot=demo&since=${seen.analytics.since}&until=${seen.analytics.until}`)).body.data).toEqual(seen.unanswered);
      expect((await after.call("/audit")).body.data).toEqual(seen.audit);
      expect(await after.service.orgs.get(tenant.organization.id)).toEqual(seen.org);
      expect((await after.call("/chatbots/demo/corrections")).body.data).toEqual(seen.corrections);
      const nextCorrection = await after.call("/chatbots/demo/corrections", { json: { question: "Do you ship to Mexico?", answer: "Not yet." } });
      expect(nextCorrection.body.data.id).toBeGreaterThan(correction.body.data.id);
      // A retry of a request answered before the move gets the same answer, and is not charged again.
      const replay = await after.call(messages, { json: { message: "How much is the Pro plan?" }, headers: { "idempotency-key": "first-question" } });
      expect(replay.headers.get("idempotency-replayed")).toBe("true");
      expect(replay.body).toEqual(first.body);
      expect(await after.service.credits.status(tenant.organization.id)).toEqual(seen.credits);

      // New rows continue after the copied ids, and new events are signed with the copied secret.
      const more = await after.call(messages, { json: { message: "Are invoices emailed?" } });
      expect(more.status).toBe(200);
      expect(more.body.data.message_id).toBeGreaterThan(second.body.data.message_id);
      const [received] = await eventually(() => {
        const got = receiver.received.filter((r) => r.json?.data?.content === "Are invoices emailed?");
        return got.length > 0 && got;
      });
      expect(verifyWebhook(hook.secret, received!.headers, received!.body)).toBe(true);
    } finally {
      await after.close();
    }

    const again = await runCli(["--db", file, "db", "copy", "--to", target]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: The PostgreSQL database is not empty \(rows in organizations, .*\): db copy only fills a new, empty database\n$/);
  }, 60_000); // Completion, not speed: several CLI processes, a service on each engine and a copy of the bundled docs.

  it("refuses a SQLite file that does not exist instead of copying an empty new one", async () => {
    const res = await runCli(["--db", join(dir, "missing.db"), "db", "copy", "--to", target]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/SQLite database .*missing\.db does not exist/);
  });
});
