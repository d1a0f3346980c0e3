import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addTenant, startHarness, type Harness } from "../support/harness.js";
import { databaseContents } from "../support/database.js";
import { sqlOf } from "../support/sql.js";

let h: Harness;
let acme: number;
let other: Awaited<ReturnType<typeof addTenant>>;
const ids: Record<string, number> = {};
const DAY = 24 * 60 * 60 * 1000;

const deliveriesOf = async (conversationId: number) =>
  (await sqlOf(h.service).get<{ n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE conversation_id = ?", conversationId))!.n;
const exists = async (conversationId: number) => (await sqlOf(h.service).get("SELECT id FROM conversations WHERE id = ?", conversationId)) !== undefined;
const countsOf = async (conversationId: number) => {
  const sql = sqlOf(h.service);
  const n = async (table: string) => (await sql.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE conversation_id = ?`, conversationId))!.n;
  return { messages: await n("messages"), leads: await n("leads"), webhook_deliveries: await n("webhook_deliveries") };
};

beforeAll(async () => {
  // Deliveries to a closed port fail and wait ten minutes for their retry: they stay pending in the outbox.
  h = await startHarness({ webhooks: { allowPrivateNetworks: true, retryDelaysMs: [600_000] } });
  acme = h.tenant.organization.id;
  other = await addTenant(h.service, "Other");
  const events = ["conversation_started", "message_received", "lead_captured", "conversation_ended", "handoff_requested"] as const;
  await h.service.webhooks.register(acme, { url: "http://127.0.0.1:9/acme", events: [...events] });
  await h.service.webhooks.register(other.organization.id, { url: "http://127.0.0.1:9/other", events: [...events] });

  const open = async (name: string, orgId: number, slug: string, input: object, messages: string[], lead?: object) => {
    const id = (await h.service.conversations.start(orgId, slug, input)).conversation_id;
    for (const message of messages) await h.service.chat.post(orgId, id, { message, role: "user" });
    if (lead) await h.service.leads.capture(orgId, slug, id, lead);
    ids[name] = id;
  };
  await open("byVisitor", acme, "demo", { visitor_id: "v-shared", visitor_name: "Zelda Erasable" }, ["my order 4471", "my address is 1 Erasure Lane"], { email: "zelda@example.com" });
  await open("byVisitorEmail", acme, "demo", { visitor_email: "Shared@Example.com" }, ["hello"]);
  // Its handoff_requested delivery carries the visitor's e-mail too.
  await h.service.conversations.requestHandoff(acme, "demo", ids.byVisitorEmail!, { reason: "a person please" });
  await open("byLeadEmail", acme, "demo", { visitor_id: "v-keep" }, ["call me"], { name: "Sam", email: "SHARED@example.com" });
  await open("unrelated", acme, "demo", { visitor_id: "v-unrelated" }, ["unrelated question"]);
  await open("theirs", other.organization.id, other.chatbot.slug, { visitor_id: "v-shared", visitor_email: "shared@example.com", visitor_name: "Other Keeper" }, ["theirs"], {
    email: "shared@example.com",
  });
});
afterAll(() => h.close());

describe("DELETE /visitors", () => {
  it("by visitor_id: deletes the visitor's conversations, messages, leads and outbox rows in this organisation only, and answers the counts", async () => {
    const before = await countsOf(ids.byVisitor!);
    expect(before).toEqual({ messages: 2, leads: 1, webhook_deliveries: 4 }); // started, two messages, the lead
    const theirsBefore = await countsOf(ids.theirs!);

    const res = await h.call("/visitors?visitor_id=v-shared", { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ conversations: 1, ...before });

    expect(await exists(ids.byVisitor!)).toBe(false);
    expect(await countsOf(ids.byVisitor!)).toEqual({ messages: 0, leads: 0, webhook_deliveries: 0 });
    expect((await h.call(`/conversations/${ids.byVisitor}`)).status).toBe(404);
    // The other organisation's visitor with the same id, and this organisation's other visitors, are untouched.
    expect(await exists(ids.theirs!)).toBe(true);
    expect(await countsOf(ids.theirs!)).toEqual(theirsBefore);
    for (const name of ["byVisitorEmail", "byLeadEmail", "unrelated"]) expect(await exists(ids[name]!), name).toBe(true);
    // Nothing the visitor wrote or was known by is left anywhere in the database.
    const contents = (await databaseContents(h.database)).toString("latin1");
    for (const gone of ["Zelda Erasable", "1 Erasure Lane", "zelda@example.com"]) expect(contents).not.toContain(gone);
    expect(contents).toContain("Other Keeper");
  });

  it("by email (any case): the conversations whose visitor e-mail or a lead's e-mail it is", async () => {
    const res = await h.call(`/visitors?email=${encodeURIComponent("sHaReD@example.COM")}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    // Outbox rows: both conversations' starts and messages, the handoff request and the lead.
    expect(res.body.data).toEqual({ conversations: 2, messages: 2, leads: 1, webhook_deliveries: 6 });
    expect(await exists(ids.byVisitorEmail!)).toBe(false);
    expect(await exists(ids.byLeadEmail!)).toBe(false);
    expect(await exists(ids.unrelated!)).toBe(true);
    expect(await exists(ids.theirs!)).toBe(true);
    expect((await h.service.leads.list(other.organization.id)).data.map((l) => l.email)).toEqual(["shared@example.com"]);
  });

  it("erasing someone with nothing stored answers zeros", async () => {
    const res = await h.call("/visitors?visitor_id=v-shared", { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ conversations: 0, messages: 0, leads: 0, webhook_deliveries: 0 });
  });

  it("needs exactly one valid selector (422) and a key (401); a refusal deletes nothing", async () => {
    for (const query of ["", "?visitor_id=v-unrelated&email=a@example.com", "?email=not-an-email", "?visitor_id=", "?visitor=v-unrelated"]) {
      const res = await h.call(`/visitors${query}`, { method: "DELETE" });
      expect(res.status, query).toBe(422);
      expect(res.body.success, query).toBe(false);
    }
    expect((await h.call("/visitors", { method: "DELETE" })).body.errors).toHaveProperty("visitor_id");
    expect((await h.call("/visitors?visitor_id=v-unrelated", { method: "DELETE", key: null })).status).toBe(401);
    expect(await exists(ids.unrelated!)).toBe(true);
  });

  it("leaves audit rows: what, how many, when, by which key; never the erased value; each organisation sees its own", async () => {
    const res = await h.call("/audit");
    expect(res.status).toBe(200);
    const erasures = res.body.data.filter((e: { action: string }) => e.action === "visitor_erased");
    expect(erasures).toHaveLength(3);
    expect(erasures[2]).toMatchObject({
      organization_id: acme,
      actor: `key ${h.tenant.key.prefix}`,
      detail: { selector: "visitor_id" },
      counts: { conversations: 1, messages: 2, leads: 1, webhook_deliveries: 4 },
    });
    expect(erasures[1]).toMatchObject({ detail: { selector: "email" }, counts: { conversations: 2, webhook_deliveries: 6 } });
    expect(Date.parse(erasures[0].created_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(res.text).not.toContain("v-shared");
    expect(res.text).not.toContain("shared@example");
    expect((await h.call("/audit", { key: other.key.key })).body.data).toEqual([]);
    expect((await h.call("/audit?limit=1")).body.data).toHaveLength(1);
    expect((await h.call("/audit?limit=0")).status).toBe(422);
  });
});

describe("retention", () => {
  it("deletes only the organisation's conversations inactive for longer than its retention days, and audits it", async () => {
    const now = new Date("2030-06-01T00:00:00.000Z");
    const sql = sqlOf(h.service);
    const at = (daysAgo: number) => new Date(now.getTime() - daysAgo * DAY).toISOString();
    const open = async (orgId: number, slug: string, startedDaysAgo: number, lastDaysAgo: number) => {
      const id = (await h.service.conversations.start(orgId, slug, {})).conversation_id;
      await h.service.chat.post(orgId, id, { message: "retained?", role: "user" });
      await h.service.leads.capture(orgId, slug, id, { email: "r@example.com" });
      await sql.run("UPDATE conversations SET started_at = ?, last_message_at = ? WHERE id = ?", at(startedDaysAgo), at(lastDaysAgo), id);
      return id;
    };
    const stale = await open(acme, "demo", 100, 31);
    const longButActive = await open(acme, "demo", 100, 29);
    const theirsStale = await open(other.organization.id, other.chatbot.slug, 100, 100);
    await sql.run("UPDATE conversations SET last_message_at = ? WHERE id IN (?, ?)", at(0), ids.unrelated, ids.theirs);

    expect((await h.service.orgs.update(acme, { retention_days: 30 })).retention_days).toBe(30);
    const results = await h.service.retention.run({ now });
    expect(results).toEqual([{ organization_id: acme, retention_days: 30, cutoff: at(30), deleted: { conversations: 1, messages: 1, leads: 1, webhook_deliveries: 3 } }]);
    expect(await exists(stale)).toBe(false);
    expect(await exists(longButActive)).toBe(true);
    expect(await exists(theirsStale)).toBe(true); // no retention set there
    expect(await exists(ids.unrelated!)).toBe(true);

    const [entry] = await h.service.privacy.audit({ organization_id: acme, limit: 1 });
    expect(entry).toMatchObject({ action: "retention", actor: "serve (retention)", detail: { retention_days: 30, cutoff: at(30) }, counts: { conversations: 1 }, created_at: now.toISOString() });
    // A pass that finds nothing writes no audit row.
    await h.service.retention.run({ now });
    expect((await h.service.privacy.audit({ organization_id: acme })).filter((e) => e.action === "retention")).toHaveLength(1);

    // Cleared, nothing more is deleted.
    expect((await h.service.orgs.update(acme, { retention_days: null })).retention_days).toBeNull();
    expect(await h.service.retention.run({ now: new Date(now.getTime() + 365 * DAY) })).toEqual([]);
    expect(await exists(longButActive)).toBe(true);
  });

  it("refuses retention days outside 1..36500", async () => {
    for (const retention_days of [0, -1, 1.5, 36_501, "30" as never]) {
      await expect(h.service.orgs.update(acme, { retention_days }), String(retention_days)).rejects.toMatchObject({ status: 422 });
    }
  });

  it("on a schedule, runs a pass at once and then at most once a day across instances (a lease in the database)", async () => {
    await h.service.orgs.update(acme, { retention_days: 30 });
    const stale = (await h.service.conversations.start(acme, "demo", {})).conversation_id;
    await sqlOf(h.service).run("UPDATE conversations SET last_message_at = ? WHERE id = ?", "2001-01-01T00:00:00.000Z", stale);
    const passed = new Promise<unknown>((resolve, reject) => h.service.retention.start({ holder: "instance-a", onPass: resolve, onError: reject }));
    expect(await passed).toEqual([expect.objectContaining({ organization_id: acme, deleted: expect.objectContaining({ conversations: 1 }) })]);
    await h.service.retention.stop();
    expect(await exists(stale)).toBe(false);
    // Another instance (or this one again) finds the day's pass done.
    expect(await h.service.retention.runIfDue("instance-b")).toBeUndefined();
    expect(await h.service.retention.runIfDue("instance-a")).toBeUndefined();
    await h.service.orgs.update(acme, { retention_days: null });
  });
});
