import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRoutes } from "../../src/http/app.js";
import type { RouteDefinition } from "../../src/http/router.js";
import { request, startHarness, type Harness } from "../support/harness.js";
import { startReceiver, type Receiver } from "../webhooks/support/receiver.js";
import { checksum, seedTwoTenants, settleDeliveries, until, type TenantRecords } from "./support.js";
import { sqlOf } from "../support/sql.js";

/*
 * The isolation matrix: every route of `apiRoutes` (new ones included
 * automatically) called with one organisation's key on the other's records,
 * in both directions. Chatbot endpoints answer 403 for another organisation's
 * slug and 404 for another chatbot's conversation (spec); account-level
 * endpoints 403 for another organisation's record (DESIGN.md). Nothing is
 * changed, and nothing of one organisation shows in the other's lists,
 * samples, webhooks or events.
 */
let h: Harness;
let a: TenantRecords;
let b: TenantRecords;
const receivers: Record<"a" | "b", Receiver> = {} as never;

beforeAll(async () => {
  h = await startHarness({ rateLimit: false, webhooks: { allowPrivateNetworks: true } });
  receivers.a = await startReceiver();
  receivers.b = await startReceiver();
  ({ a, b } = await seedTwoTenants(h, (t) => `${receivers[t].url}/${t}`));
  await settleDeliveries(h.service);
}, 30_000);
afterAll(async () => {
  await h?.close();
  await receivers.a?.close();
  await receivers.b?.close();
});

/** The record each path parameter names, taken from `owner`. */
function idFor(route: RouteDefinition, name: string, owner: TenantRecords): string {
  if (name === "slug") return owner.slug;
  if (name === "message_id") return String(owner.assistantMessageId);
  if (route.path.startsWith("/leads")) return String(owner.leadId);
  if (route.path.startsWith("/webhooks")) return String(owner.webhookId);
  return String(owner.conversationId);
}

/** A body the route would accept from the owner, so only the tenant check can refuse it. */
function validBody(route: RouteDefinition, owner: TenantRecords): unknown {
  const key = `${route.method} ${route.path}`;
  if (key.endsWith("/messages/rate")) return { message_id: owner.assistantMessageId, rating: "bad" };
  if (key === "POST /chatbots/:slug/conversations/:id/messages") return { message: "How do I install Widgetron?" };
  if (key === "POST /conversations/:id/messages") return { message: "An operator's note", role: "user" };
  if (key.endsWith("/leads")) return { name: "Intruder", email: "intruder@example.com" };
  if (key === "PUT /leads/:id") return { name: "Changed by another organisation" };
  return route.method === "GET" || route.method === "DELETE" ? undefined : {};
}

const withParams = apiRoutes.filter((r) => r.auth !== false && r.path.includes(":"));
const lists = apiRoutes.filter((r) => r.auth !== false && !r.path.includes(":") && r.method === "GET");

const call = (key: string, path: string, body: unknown, method: string) => request(`${h.api}${path}`, { key, method, ...(body !== undefined && { json: body }) });

describe("cross-tenant matrix", () => {
  for (const [callerName, ownerName] of [
    ["b", "a"],
    ["a", "b"],
  ] as const) {
    it(`${callerName.toUpperCase()}'s key on every record of ${ownerName.toUpperCase()}: 403 on every route, nothing changed`, async () => {
      const caller = callerName === "a" ? a : b;
      const owner = ownerName === "a" ? a : b;
      const before = (await checksum(h.service));
      const results: string[] = [];
      for (const route of withParams) {
        const path = route.path.replace(/:(\w+)/g, (_m, name: string) => idFor(route, name, owner));
        const res = await call(caller.key, path, validBody(route, owner), route.method);
        results.push(`${route.method} ${route.path} ${res.status}`);
        expect(res.status, `${route.method} ${path}: ${res.text}`).toBe(403);
        expect(res.body).toMatchObject({ success: false, message: expect.any(String) });
        expect(res.text).not.toContain(owner.slug === "demo" ? "visitor-demo" : `visitor-${owner.slug}`);
      }
      expect(results).toHaveLength(withParams.length);
      expect((await checksum(h.service))).toBe(before);
    });

    it(`${callerName.toUpperCase()}'s own slug with ${ownerName.toUpperCase()}'s conversation and message ids: 404 on every chatbot route`, async () => {
      const caller = callerName === "a" ? a : b;
      const owner = ownerName === "a" ? a : b;
      const before = (await checksum(h.service));
      const routes = withParams.filter((r) => r.path.startsWith("/chatbots/:slug/conversations/:id"));
      expect(routes.length).toBeGreaterThanOrEqual(6);
      for (const route of routes) {
        const path = route.path.replace(/:(\w+)/g, (_m, name: string) => (name === "slug" ? caller.slug : idFor(route, name, owner)));
        const res = await call(caller.key, path, validBody(route, owner), route.method);
        expect(res.status, `${route.method} ${path}: ${res.text}`).toBe(404);
      }
      // The caller's own conversation with the other's message id in the body.
      const rate = await call(caller.key, `/chatbots/${caller.slug}/conversations/${caller.conversationId}/messages/rate`, { message_id: owner.assistantMessageId, rating: "good" }, "POST");
      expect(rate.status).toBe(404);
      expect((await checksum(h.service))).toBe(before);
    });
  }

  it("lists, filters and samples show only the caller's own records", async () => {
    const sql = sqlOf(h.service);
    const idsOf = async (query: string, org: number) => new Set((await sql.all<{ id: number }>(query, org)).map((r) => r.id));
    const own = {
      "/conversations": await idsOf("SELECT c.id FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id WHERE b.organization_id = ?", b.organizationId),
      "/leads": await idsOf("SELECT l.id FROM leads l JOIN conversations c ON c.id = l.conversation_id JOIN chatbots b ON b.id = c.chatbot_id WHERE b.organization_id = ?", b.organizationId),
      "/webhooks": await idsOf("SELECT id FROM webhooks WHERE organization_id = ?", b.organizationId),
      "/chatbots": await idsOf("SELECT id FROM chatbots WHERE organization_id = ?", b.organizationId),
    };
    const markersOfA = ["visitor-demo", "Name of demo", "lead@demo.test", "Lead demo", `${receivers.a.url}/a`, '"slug":"demo"'];
    expect(lists.length).toBeGreaterThanOrEqual(6);
    for (const route of lists) {
      for (const query of ["", "?chatbot=demo", "?per_page=100", "?status=active", "?since=2000-01-01T00:00:00Z"]) {
        const res = await call(b.key, `${route.path}${query}`, undefined, "GET");
        expect(res.status, `${route.path}${query}`).toBeLessThan(500);
        for (const marker of markersOfA) expect(res.text, `${route.path}${query} shows ${marker}`).not.toContain(marker);
        const ownIds = own[route.path as keyof typeof own];
        if (ownIds && res.status === 200) {
          for (const item of res.body.data as { id: number }[]) expect(ownIds.has(item.id), `${route.path}${query} lists ${item.id}`).toBe(true);
          if (query === "") expect(res.body.data.length).toBeGreaterThan(0);
        }
      }
    }
    const auth = await call(b.key, "/auth/test", undefined, "GET");
    expect(auth.body.data.organization_id).toBe(b.organizationId);
  });

  it("A's events reach only A's webhooks and A's listeners, never B's", async () => {
    const seen: { name: string; organizationId: number }[] = [];
    const off = h.service.on("*", (event) => seen.push(event as never));
    const fromA = receivers.a.received.length;
    const fromB = receivers.b.received.length;
    const key = a.key;
    const started = await call(key, `/chatbots/${a.slug}/conversations`, { visitor_id: "visitor-demo-2" }, "POST");
    const id = started.body.data.conversation_id;
    await call(key, `/chatbots/${a.slug}/conversations/${id}/messages`, { message: "How much is the Pro plan?" }, "POST");
    await call(key, `/chatbots/${a.slug}/conversations/${id}/leads`, { email: "lead2@demo.test" }, "POST");
    await call(key, `/chatbots/${a.slug}/conversations/${id}/end`, undefined, "POST");
    off();
    await until(() => receivers.a.received.length >= fromA + 4, 5_000, "A's deliveries");
    expect(seen.map((e) => e.name).sort()).toEqual(["conversation_ended", "conversation_started", "lead_captured", "message_received"]);
    expect(seen.every((e) => e.organizationId === a.organizationId)).toBe(true);
    // Give a wrongly addressed delivery the time to arrive before asserting its absence.
    await new Promise((r) => setTimeout(r, 100));
    expect(receivers.b.received.length).toBe(fromB);
    for (const got of receivers.b.received) expect(got.json.data.agent?.slug ?? b.slug).toBe(b.slug);
    const crossed = (await sqlOf(h.service).get<{ n: number }>(
      "SELECT count(*) AS n FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE w.organization_id = ? AND d.payload LIKE '%visitor-demo%'",
      b.organizationId,
    ))!;
    expect(crossed.n).toBe(0);
  });
});
