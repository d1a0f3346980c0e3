import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEngine } from "../support/database.js";
import { startHarness, type Harness } from "../support/harness.js";
import { sqlOf } from "../support/sql.js";
import { openConversation } from "../chat/helpers.js";
import { moveTo, rate, send, shopAndSales } from "./helpers.js";

/*
 * GET /analytics reads whole UTC days from counters that triggers keep in the
 * transaction of each write, and only partial days from the rows. These tests
 * change rows every way the service does (ratings, regeneration, handoffs,
 * leads, erasure, retention, deleting a chatbot) and check the report against
 * a count made here from the rows themselves.
 */

let h: Harness;
let org: number;
const MONTH = { since: "2025-04-01", until: "2025-04-30" };
const DAY = 86_400_000;

type Counts = Record<"conversations" | "visitor_messages" | "answered" | "cannot_answer" | "good_ratings" | "bad_ratings" | "leads" | "handoffs", number>;
const zero = (): Counts => ({ conversations: 0, visitor_messages: 0, answered: 0, cannot_answer: 0, good_ratings: 0, bad_ratings: 0, leads: 0, handoffs: 0 });
const truthy = (v: unknown) => v === 1 || v === true;

/** The organisation's counts per day of April 2025, counted from the rows by the documented rules. */
async function countedFromRows(slug?: string): Promise<Record<string, Counts>> {
  const sql = sqlOf(h.service);
  const days: Record<string, Counts> = {};
  const on = (at: string | null, key: keyof Counts) => {
    if (!at || at < "2025-04-01" || at > "2025-04-30T23:59:59.999Z") return;
    (days[at.slice(0, 10)] ??= zero())[key]++;
  };
  const scope = slug ? "b.slug = ?" : "b.organization_id = ?";
  const param = slug ?? org;
  for (const c of await sql.all<{ started_at: string; handed_off_at: string | null }>(`SELECT c.started_at, c.handed_off_at FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id WHERE ${scope}`, param)) {
    on(c.started_at, "conversations");
    on(c.handed_off_at, "handoffs");
  }
  for (const l of await sql.all<{ created_at: string }>(`SELECT l.created_at FROM leads l JOIN chatbots b ON b.id = l.chatbot_id WHERE ${scope}`, param)) on(l.created_at, "leads");
  const messages = await sql.all<{ role: string; model: string | null; rating: string | null; regenerated: unknown; cannot_answer: unknown; created_at: string }>(
    `SELECT m.role, m.model, m.rating, m.regenerated, m.cannot_answer, m.created_at FROM messages m JOIN conversations c ON c.id = m.conversation_id JOIN chatbots b ON b.id = c.chatbot_id WHERE ${scope}`,
    param,
  );
  for (const m of messages) {
    const shown = !truthy(m.regenerated);
    if (m.role === "user") on(m.created_at, "visitor_messages");
    if (m.role === "assistant" && shown && !truthy(m.cannot_answer) && m.model !== null) on(m.created_at, "answered");
    if (m.role === "assistant" && shown && truthy(m.cannot_answer)) on(m.created_at, "cannot_answer");
    if (shown && m.rating === "good") on(m.created_at, "good_ratings");
    if (shown && m.rating === "bad") on(m.created_at, "bad_ratings");
  }
  return days;
}

/** GET /analytics for April 2025 by day, as `{day: counts}` without the empty days. */
async function reported(query = ""): Promise<Record<string, Counts>> {
  const res = await h.call(`/analytics?since=${MONTH.since}&until=${MONTH.until}${query}`);
  expect(res.status, res.text).toBe(200);
  const days: Record<string, Counts> = {};
  for (const { start, end: _, ...counts } of res.body.data.buckets as ({ start: string; end: string } & Counts)[]) {
    if (Object.values(counts).some((n) => n !== 0)) days[start] = counts;
  }
  return days;
}

const expectReportMatchesRows = async () => {
  expect(await reported()).toEqual(await countedFromRows());
  expect(await reported("&chatbot=shop")).toEqual(await countedFromRows("shop"));
};

let ids: Record<string, number>;
let replies: Record<string, number>;

beforeAll(async () => {
  h = await startHarness();
  org = h.tenant.organization.id;
  const seeded = await shopAndSales(h);
  ({ ids, replies } = seeded);
  const { conversation } = seeded;
  // Times of day on purpose: some ranges below start or end inside these days.
  await conversation("a", "shop", "2025-04-02T08:15:00.000Z", { visitor_id: "v-a" }, ["How do I install Widgetron?", "Do you ship to Mars?"]);
  await conversation("b", "shop", "2025-04-02T23:59:59.999Z", { visitor_id: "v-b" }, ["How much does the Pro plan cost?"]);
  await conversation("c", "sales", "2025-04-03T00:00:00.000Z", { visitor_id: "v-a" }, ["How do I install Widgetron?"]);
  await conversation("d", "shop", "2025-04-20T12:00:00.000Z", { visitor_id: "v-d" }, ["Does the installer create a config file?"]);
  expect((await h.call(`/chatbots/shop/conversations/${ids.d}/leads`, { json: { email: "d@example.com" } })).status).toBe(201);
  await moveTo(h, ids.d!, "2025-04-20T12:00:00.000Z");
});

afterAll(async () => {
  await h?.close();
});

describe("analytics counters", () => {
  it("match the rows after turns, leads and moved times", async () => {
    const days = await countedFromRows();
    expect(Object.keys(days).sort()).toEqual(["2025-04-02", "2025-04-03", "2025-04-20"]);
    expect(days["2025-04-02"]).toMatchObject({ conversations: 2, visitor_messages: 3 });
    await expectReportMatchesRows();
  });

  it("follow a rating from good to bad, and a reply replaced by regenerate", async () => {
    await rate(h, "shop", ids.a!, replies.a0!, "good");
    await expectReportMatchesRows();
    expect((await reported())["2025-04-02"]).toMatchObject({ good_ratings: 1, bad_ratings: 0 });
    await rate(h, "shop", ids.a!, replies.a0!, "bad");
    expect((await reported())["2025-04-02"]).toMatchObject({ good_ratings: 0, bad_ratings: 1 });
    await rate(h, "shop", ids.a!, replies.a0!, "good");
    await expectReportMatchesRows();

    // Regenerating the latest reply flags the old one (rated bad first) and stores a new one today.
    await rate(h, "shop", ids.d!, replies.d0!, "bad");
    const before = (await reported())["2025-04-20"]!;
    const regen = await h.call(`/chatbots/shop/conversations/${ids.d}/messages/${replies.d0}/regenerate`, { method: "POST" });
    expect(regen.status, regen.text).toBe(200);
    const after = (await reported())["2025-04-20"]!;
    expect(after.bad_ratings).toBe(before.bad_ratings - 1);
    expect(after.answered + after.cannot_answer).toBe(before.answered + before.cannot_answer - 1);
    await expectReportMatchesRows();
  });

  it("count a handoff once, on the day of the first one", async () => {
    for (let i = 0; i < 2; i++) {
      expect((await h.call(`/conversations/${ids.b}/handoff`, { json: {} })).status).toBe(200);
      expect((await h.call(`/conversations/${ids.b}/release`, { method: "POST" })).status).toBe(200);
    }
    await moveTo(h, ids.b!, "2025-04-02T23:59:59.999Z");
    expect((await reported())["2025-04-02"]!.handoffs).toBe(1);
    await expectReportMatchesRows();
  });

  it("agree with the rows over ranges that start or end inside a day", async () => {
    const sql = sqlOf(h.service);
    const count = async (table: string, column: string, since: string, until: string) =>
      (await sql.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${column} >= ? AND ${column} <= ?`, since, until))!.n;
    const ranges: [string, string][] = [
      ["2025-04-02T08:15:00.000Z", "2025-04-20T11:59:59.999Z"],
      ["2025-04-02T08:15:00.001Z", "2025-04-20T12:00:00.000Z"],
      ["2025-04-02T23:59:59.999Z", "2025-04-03T00:00:00.000Z"],
      ["2025-04-03T00:00:00.000Z", "2025-04-30T23:59:59.999Z"],
      ["2025-04-01T00:00:00.000Z", "2025-04-02T23:59:59.998Z"],
    ];
    for (const [since, until] of ranges) {
      const res = await h.call(`/analytics?since=${since}&until=${until}`);
      expect(res.status, res.text).toBe(200);
      const label = `${since}..${until}`;
      expect(res.body.data.totals.conversations, label).toBe(await count("conversations", "started_at", since, until));
      expect(res.body.data.totals.leads, label).toBe(await count("leads", "created_at", since, until));
      const visitor = (await sql.get<{ n: number }>("SELECT count(*) AS n FROM messages WHERE role = 'user' AND created_at >= ? AND created_at <= ?", since, until))!.n;
      expect(res.body.data.totals.visitor_messages, label).toBe(visitor);
    }
  });

  it("take an erased visitor's conversations back out", async () => {
    const res = await h.call("/visitors?visitor_id=v-a", { method: "DELETE" });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.conversations).toBe(2);
    const days = await reported();
    expect(days["2025-04-03"]).toBeUndefined();
    expect(days["2025-04-02"]).toMatchObject({ conversations: 1, visitor_messages: 1 });
    await expectReportMatchesRows();
  });

  it("take conversations removed by retention back out", async () => {
    const now = new Date(Date.parse("2025-04-20T12:00:00.000Z") + 10 * DAY);
    await h.service.orgs.update(org, { retention_days: 15 });
    const [result] = await h.service.retention.run({ now });
    expect(result!.deleted.conversations).toBe(1); // b, inactive since 2 April; d stays
    await h.service.orgs.update(org, { retention_days: null });
    expect(Object.keys(await reported())).toEqual(["2025-04-20"]);
    await expectReportMatchesRows();
  });

  it("go with a deleted chatbot", async () => {
    const id = await openConversation(h, {}, "sales");
    await send(h, "sales", id, "How do I install Widgetron?");
    await moveTo(h, id, "2025-04-21T09:00:00.000Z");
    expect((await reported())["2025-04-21"]).toMatchObject({ conversations: 1 });
    await h.service.chatbots.delete("sales");
    expect((await reported())["2025-04-21"]).toBeUndefined();
    expect(await sqlOf(h.service).all("SELECT * FROM analytics_daily WHERE chatbot_id NOT IN (SELECT id FROM chatbots)")).toEqual([]);
    await expectReportMatchesRows();
  });

  it("are what the migration's backfill counts from rows stored before the counters existed", async () => {
    const before = await reported();
    const dir = join(import.meta.dirname, "..", "..", "drizzle", testEngine === "postgres" ? "postgres" : "sqlite");
    const file = readdirSync(dir).find((name) => name.endsWith("_analytics_daily_counts.sql"));
    const backfill = readFileSync(join(dir, file!), "utf8")
      .split("--> statement-breakpoint")
      .map((s) => s.replace(/^--.*$/gm, "").trim())
      .find((s) => /^INSERT INTO .analytics_daily./.test(s));
    const sql = sqlOf(h.service);
    await sql.exec("DELETE FROM analytics_daily");
    expect(await reported()).toEqual({});
    await sql.exec(backfill!);
    expect(await reported()).toEqual(before);
    await expectReportMatchesRows();
  });
});
