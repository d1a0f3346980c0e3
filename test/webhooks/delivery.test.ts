import { afterEach, describe, expect, it } from "vitest";
import { EVENT_NAMES } from "../../src/core/events.js";
import { verifyWebhook } from "../../src/index.js";
import { createChatService, type ChatService } from "../../src/service.js";
import { startHarness, tempDir, type Harness } from "../support/harness.js";
import { emit, sampleEvent } from "./support/events.js";
import { eventually, startReceiver, type Receiver, type Reply } from "./support/receiver.js";
import { sqlOf } from "../support/sql.js";
import { testDatabase } from "../support/database.js";

const fast = { allowPrivateNetworks: true, retryDelaysMs: [50, 50, 50] };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(reply?: (n: number) => Reply): Promise<Receiver> {
  const r = await startReceiver(reply);
  cleanups.push(() => r.close());
  return r;
}

async function harness(webhooks: Record<string, unknown> = fast): Promise<Harness> {
  const h = await startHarness({ webhooks });
  cleanups.push(() => h.close());
  return h;
}

async function register(h: Harness, url: string, events: string[] = [...EVENT_NAMES]): Promise<{ id: number; secret: string }> {
  const res = await h.call("/webhooks", { json: { url, events } });
  expect(res.status).toBe(201);
  return res.body.data;
}

async function stats(h: Harness, id: number) {
  return (await h.call("/webhooks")).body.data.find((w: { id: number }) => w.id === id);
}

function deliveries(service: ChatService) {
  return sqlOf(service).all<{ message_id: string; event: string; status: string; attempts: number; last_status: number | null; last_error: string | null }>(
    "SELECT message_id, event, status, attempts, last_status, last_error FROM webhook_deliveries ORDER BY id",
  );
}

describe("delivery", () => {
  it("POSTs each event as {event, data}, signed, with JSON and chatsvc user-agent headers", async () => {
    const h = await harness();
    const r = await receiver();
    const { secret } = await register(h, `${r.url}/hook`);
    const org = h.tenant.organization.id;
    const sent = EVENT_NAMES.map((name, i) => sampleEvent(name, org, i + 1));
    for (const event of sent) expect(await emit(h.service, event)).toEqual({ type: "webhook", event: event.name, deliveries: 1 });

    const got = await r.waitFor(sent.length);
    expect(got.map((g) => g.json).sort((a, b) => a.event.localeCompare(b.event))).toEqual(
      sent.map((e) => ({ event: e.name, data: e.data })).sort((a, b) => a.event.localeCompare(b.event)),
    );
    for (const g of got) {
      expect(g.method).toBe("POST");
      expect(g.path).toBe("/hook");
      expect(g.headers["content-type"]).toBe("application/json");
      expect(g.headers["user-agent"]).toMatch(/^chatsvc\/\d+\.\d+\.\d+/);
      expect(g.headers["webhook-id"]).toMatch(/^msg_\w+$/);
      expect(Math.abs(Number(g.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(5);
      expect(verifyWebhook(secret, g.headers, g.body)).toBe(true);
      expect(verifyWebhook(secret, g.headers, g.body.replace("}", ',"x":1}'))).toBe(false);
    }
    expect(new Set(got.map((g) => g.headers["webhook-id"])).size).toBe(sent.length);
  });

  it("gives later conversations and their webhook deliveries ids that sort after earlier ones, so receivers and logs can order them", async () => {
    const h = await harness();
    const r = await receiver();
    await register(h, `${r.url}/hook`, ["conversation_started"]);
    const started: { conversation_id: number; session_id: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await h.call("/chatbots/demo/conversations", { json: { visitor_id: `v${i}` } });
      expect(res.status).toBe(201);
      started.push(res.body.data);
      // The ids start with the millisecond: the next conversation is in a later one.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const sessions = started.map((c) => c.session_id);
    expect([...sessions].sort()).toEqual(sessions);
    const got = await r.waitFor(5);
    const ids = got.sort((a, b) => a.json.data.id - b.json.data.id).map((g) => g.headers["webhook-id"] as string);
    expect(ids.map((id) => id.replace(/^msg_/, "")).sort()).toEqual(ids.map((id) => id.replace(/^msg_/, "")));
    for (const id of ids) expect(id).toMatch(/^msg_\w{20,}$/);
  });

  it("sends only to active webhooks of the event's organisation subscribed to it (a rolled-back write sends nothing: test/storage/contract.test.ts)", async () => {
    const h = await harness();
    const leads = await receiver();
    const all = await receiver();
    await register(h, `${leads.url}/leads`, ["lead_captured"]);
    await register(h, `${all.url}/all`);
    const org = h.tenant.organization.id;

    expect((await emit(h.service, sampleEvent("message_received", org, 1))).deliveries).toBe(1);
    expect((await emit(h.service, sampleEvent("lead_captured", org + 1, 2))).deliveries).toBe(0);
    expect((await emit(h.service, sampleEvent("lead_captured", org, 4))).deliveries).toBe(2);

    await all.waitFor(2);
    await leads.waitFor(1);
    await eventually(async () => (await deliveries(h.service)).every((d) => d.status === "delivered"));
    expect(all.received.map((g) => [g.json.event, g.json.data.id]).sort()).toEqual([
      ["lead_captured", 4],
      ["message_received", 1],
    ]);
    expect(leads.received.map((g) => [g.json.event, g.json.data.id])).toEqual([["lead_captured", 4]]);
    expect((await deliveries(h.service))).toHaveLength(3);
  });

  it("retries a receiver that fails twice: 3 attempts, the same webhook-id, counted once and not as failed", async () => {
    const h = await harness();
    const r = await receiver((n) => ({ status: n < 2 ? 500 : 204 }));
    const { id, secret } = await register(h, `${r.url}/hook`);
    await emit(h.service, sampleEvent("lead_captured", h.tenant.organization.id));

    const got = await r.waitFor(3);
    expect(new Set(got.map((g) => g.headers["webhook-id"])).size).toBe(1);
    for (const g of got) expect(verifyWebhook(secret, g.headers, g.body)).toBe(true);
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(45);
    const [row] = await eventually(async () => (await deliveries(h.service)).filter((d) => d.status === "delivered").length === 1 && (await deliveries(h.service)));
    expect(row).toMatchObject({ attempts: 3, last_status: 204, last_error: null });
    const s = await stats(h, id);
    expect(s).toMatchObject({ total_triggers: 1, failed_triggers: 0, last_triggered_at: expect.any(String) });
    // The last failure stays visible after the success that followed it.
    expect(s.last_failure).toEqual({ at: expect.any(String), status: 500, error: "HTTP 500" });
    expect(Date.parse(s.last_failure.at)).toBeLessThanOrEqual(Date.parse(s.last_triggered_at));
    expect(r.received).toHaveLength(3);
  });

  it("gives up on a receiver that always fails after exactly 4 attempts, counting one failed trigger", async () => {
    const h = await harness();
    const r = await receiver(() => ({ status: 500 }));
    const { id } = await register(h, `${r.url}/hook`);
    await emit(h.service, sampleEvent("conversation_started", h.tenant.organization.id));

    await r.waitFor(4);
    const [row] = await eventually(async () => (await deliveries(h.service))[0]?.status === "failed" && (await deliveries(h.service)));
    expect(row).toMatchObject({ attempts: 4, last_status: 500, last_error: "HTTP 500" });
    const s = await stats(h, id);
    expect(s).toMatchObject({ total_triggers: 1, failed_triggers: 1, last_failure: { at: s.last_triggered_at, status: 500, error: "HTTP 500" } });
    expect(Date.parse(s.last_triggered_at)).toBeGreaterThanOrEqual(r.received[3]!.at - 1000);
    expect(new Set(r.received.map((g) => g.headers["webhook-id"])).size).toBe(1);
    // A later event is counted on its own.
    await emit(h.service, sampleEvent("conversation_started", h.tenant.organization.id, 2));
    await r.waitFor(8);
    await eventually(async () => (await deliveries(h.service)).every((d) => d.status === "failed"));
    expect(await stats(h, id)).toMatchObject({ total_triggers: 2, failed_triggers: 2 });
    expect(r.received).toHaveLength(8);
  });

  it("does not follow redirects: a 3xx is a failed attempt", async () => {
    const h = await harness();
    const r = await receiver(() => ({ status: 302, headers: { location: "/elsewhere" } }));
    const { id } = await register(h, `${r.url}/hook`);
    await emit(h.service, sampleEvent("lead_captured", h.tenant.organization.id));

    await eventually(async () => (await deliveries(h.service))[0]?.status === "failed");
    expect(r.received.map((g) => g.path)).toEqual(["/hook", "/hook", "/hook", "/hook"]);
    expect((await deliveries(h.service))[0]).toMatchObject({ attempts: 4, last_status: 302, last_error: expect.stringMatching(/redirect/i) });
    expect(await stats(h, id)).toMatchObject({ total_triggers: 1, failed_triggers: 1 });
  });

  it("fails an attempt the receiver does not answer within the timeout, and retries it", async () => {
    // Set as `chatsvc serve` takes it, from the environment.
    const h = await startHarness({ webhooks: { ...fast, retryDelaysMs: [50] }, env: { CHATSVC_WEBHOOK_TIMEOUT_MS: "300" } });
    cleanups.push(() => h.close());
    const r = await receiver(() => ({ hang: true }));
    const { id } = await register(h, `${r.url}/hook`);
    const started = Date.now();
    await emit(h.service, sampleEvent("lead_captured", h.tenant.organization.id));

    await eventually(async () => (await deliveries(h.service))[0]?.status === "failed", 5_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    expect(r.received).toHaveLength(2);
    expect((await deliveries(h.service))[0]).toMatchObject({ attempts: 2, last_status: null, last_error: "No answer within 300 ms" });
    expect(await stats(h, id)).toMatchObject({ total_triggers: 1, failed_triggers: 1, last_failure: { status: null, error: "No answer within 300 ms" } });
  });

  it("a 410 answer deactivates the webhook: no retry, no new deliveries", async () => {
    const h = await harness();
    const r = await receiver(() => ({ status: 410 }));
    const { id } = await register(h, `${r.url}/hook`);
    await emit(h.service, sampleEvent("lead_captured", h.tenant.organization.id, 1));

    await eventually(async () => (await deliveries(h.service))[0]?.status === "failed");
    expect(await stats(h, id)).toMatchObject({ is_active: false, total_triggers: 1, failed_triggers: 1 });
    expect((await emit(h.service, sampleEvent("lead_captured", h.tenant.organization.id, 2))).deliveries).toBe(0);
    expect((await deliveries(h.service))).toHaveLength(1);
    expect(r.received).toHaveLength(1);
    // Registering the URL again is how its owner turns it back on.
    expect((await h.call("/webhooks", { json: { url: `${r.url}/hook`, events: ["lead_captured"] } })).body.data.is_active).toBe(true);
  });

  it("waits as long as Retry-After says on a 429 before the next attempt", async () => {
    const h = await harness();
    const r = await receiver((n) => (n === 0 ? { status: 429, headers: { "retry-after": "1" } } : { status: 200 }));
    const { id } = await register(h, `${r.url}/hook`);
    await emit(h.service, sampleEvent("lead_captured", h.tenant.organization.id));

    const got = await r.waitFor(2, 4_000);
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(950);
    await eventually(async () => (await deliveries(h.service))[0]?.status === "delivered");
    expect(await stats(h, id)).toMatchObject({ total_triggers: 1, failed_triggers: 0 });
  });

  it("a deleted webhook gets no new deliveries, and its queued ones are dropped", async () => {
    const h = await harness();
    const gone = await receiver(() => ({ status: 500 }));
    const kept = await receiver();
    const { id } = await register(h, `${gone.url}/hook`);
    await register(h, `${kept.url}/hook`);
    await emit(h.service, sampleEvent("lead_captured", h.tenant.organization.id, 1));
    await gone.waitFor(1);
    expect((await h.call(`/webhooks/${id}`, { method: "DELETE" })).status).toBe(200);

    expect((await emit(h.service, sampleEvent("lead_captured", h.tenant.organization.id, 2))).deliveries).toBe(1);
    await kept.waitFor(2);
    await eventually(async () => (await deliveries(h.service)).every((d) => d.status === "delivered"));
    expect((await deliveries(h.service))).toHaveLength(2);
    expect(gone.received.length).toBeLessThanOrEqual(2);
    expect(gone.received.every((g) => g.json.data.id === 1)).toBe(true);
  });
});

describe("address policy at delivery", () => {
  it.each([
    ["a name that resolves to a loopback address", (port: number) => `http://localhost:${port}/hook`, /local name|not a public address/],
    ["a loopback IP literal", (port: number) => `http://127.0.0.1:${port}/hook`, /not a public address \(loopback\)/],
    ["a decimal IP literal", (port: number) => `http://2130706433:${port}/hook`, /not a public address \(loopback\)/],
  ])("refuses %s registered while private networks were allowed", async (_, urlOf, error) => {
    const r = await receiver();
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const database = await testDatabase(dir);
    cleanups.push(database.drop);
    const db = database.options;
    // Registered under a permissive configuration (or before DNS changed)...
    const permissive = await createChatService({ env: {}, ...db, webhooks: fast });
    const tenant = await permissive.bootstrap({ organizationName: "Acme", email: "owner@acme.test" });
    await permissive.webhooks.register(tenant.organization.id, { url: urlOf(r.port), events: ["lead_captured"] });
    await permissive.close();
    // ...and delivered by a service that refuses private networks.
    const strict = await createChatService({ env: {}, ...db, webhooks: { retryDelaysMs: [20, 20, 20] } });
    cleanups.push(() => strict.close());
    expect((await emit(strict, sampleEvent("lead_captured", tenant.organization.id))).deliveries).toBe(1);

    const [row] = await eventually(async () => (await deliveries(strict))[0]?.status === "failed" && (await deliveries(strict)));
    expect(row!.attempts).toBe(4);
    expect(row!.last_error).toMatch(error);
    expect(r.received).toHaveLength(0);
    expect((await strict.webhooks.list())[0]).toMatchObject({ total_triggers: 1, failed_triggers: 1 });
  });
});

describe("shutdown and restart", () => {
  it("close() waits briefly for deliveries in flight, leaves the rest pending, and the next start delivers them", async () => {
    let phase = 1;
    const r = await receiver((n) => (phase === 2 ? {} : n === 0 ? { delayMs: 150 } : { hang: true }));
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const database = await testDatabase(dir);
    cleanups.push(database.drop);
    const db = database.options;
    const first = await createChatService({ env: {}, ...db, webhooks: { ...fast, concurrency: 2 } });
    const tenant = await first.bootstrap({ organizationName: "Acme", email: "owner@acme.test" });
    await first.webhooks.register(tenant.organization.id, { url: `${r.url}/hook`, events: ["lead_captured"] });
    for (let i = 1; i <= 3; i++) await emit(first, sampleEvent("lead_captured", tenant.organization.id, i));
    await r.waitFor(2);
    const closing = Date.now();
    await first.close();
    // Bounded: the hanging delivery is cut off after the grace period, not after the 10 s timeout.
    expect(Date.now() - closing).toBeLessThan(6_000);
    expect(r.received.map((g) => g.json.data.id)).toEqual([1, 2]);

    phase = 2;
    const second = await createChatService({ env: {}, ...db, webhooks: fast });
    cleanups.push(() => second.close());
    // Event 1 finished within the grace period; 2 was cut off and 3 never started: both go out now.
    await r.waitFor(4);
    await eventually(async () => (await deliveries(second)).every((d) => d.status === "delivered"));
    expect(r.received.slice(2).map((g) => g.json.data.id).sort()).toEqual([2, 3]);
    const resent = r.received.slice(2).find((g) => g.json.data.id === 2)!;
    expect(resent.headers["webhook-id"]).toBe(r.received[1]!.headers["webhook-id"]);
    expect((await deliveries(second)).map((d) => d.attempts)).toEqual([1, 1, 1]);
    expect(r.received).toHaveLength(4);
  }, 10_000);
});

describe("housekeeping", () => {
  it("prunes finished deliveries older than a week on start, keeping the counters", async () => {
    const r = await receiver(() => ({ status: 500 }));
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const database = await testDatabase(dir);
    cleanups.push(database.drop);
    const db = database.options;
    const first = await createChatService({ env: {}, ...db, webhooks: { ...fast, retryDelaysMs: [] } });
    const tenant = await first.bootstrap({ organizationName: "Acme", email: "owner@acme.test" });
    await first.webhooks.register(tenant.organization.id, { url: `${r.url}/hook`, events: ["lead_captured"] });
    await emit(first, sampleEvent("lead_captured", tenant.organization.id, 1));
    await eventually(async () => (await deliveries(first))[0]?.status === "failed");
    const eightDaysAgo = Date.now() - 8 * 24 * 60 * 60 * 1000;
    await sqlOf(first).run("UPDATE webhook_deliveries SET next_attempt_at = ?", eightDaysAgo);
    await first.close();

    const second = await createChatService({ env: {}, ...db, webhooks: fast });
    cleanups.push(() => second.close());
    await eventually(async () => (await deliveries(second)).length === 0);
    expect((await second.webhooks.list())[0]).toMatchObject({ total_triggers: 1, failed_triggers: 1 });
  });
});
