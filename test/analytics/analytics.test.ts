import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEngine } from "../support/database.js";
import { addTenant, startHarness, type Harness } from "../support/harness.js";
import { runCli } from "../support/cli.js";
import { sqlOf } from "../support/sql.js";
import { DOCS, ingestDocs, openConversation } from "../chat/helpers.js";

/*
 * Everything is seeded through the API (send, rate, lead, end); then each
 * conversation is moved to a day of March 2025 by rewriting its timestamps,
 * since the API only ever writes "now".
 */

let h: Harness;
let other: Awaited<ReturnType<typeof addTenant>>;
const ids: Record<string, number> = {};

async function send(slug: string, conversation: number, message: string) {
  const res = await h.call(`/chatbots/${slug}/conversations/${conversation}/messages`, { json: { message } });
  expect(res.status, res.text).toBe(200);
  return res.body.data as { message_id: number; cannot_answer: boolean; sources: { name: string }[] };
}

async function rate(slug: string, conversation: number, messageId: number, rating: "good" | "bad") {
  const res = await h.call(`/chatbots/${slug}/conversations/${conversation}/messages/rate`, { json: { message_id: messageId, rating } });
  expect(res.status, res.text).toBe(200);
}

/** Moves a conversation, its messages and its leads to `day` (keeping their order by id). */
async function moveTo(conversation: number, day: string) {
  const sql = sqlOf(h.service);
  const at = `${day}T10:00:00.000Z`;
  await sql.run("UPDATE conversations SET started_at = ?, last_message_at = ?, handed_off_at = CASE WHEN handed_off_at IS NULL THEN NULL ELSE ? END WHERE id = ?", at, at, at, conversation);
  await sql.run("UPDATE messages SET created_at = ? WHERE conversation_id = ?", at, conversation);
  await sql.run("UPDATE leads SET created_at = ? WHERE conversation_id = ?", at, conversation);
}

beforeAll(async () => {
  h = await startHarness();
  for (const slug of ["shop", "sales"]) await h.service.chatbots.create({ organization_id: h.tenant.organization.id, slug, name: slug });
  await ingestDocs(h.service, "shop", [...DOCS, { name: "faq.md", content: "Frequently asked\n\nThe office cat is called Biscuit and sleeps all day." }]);
  await ingestDocs(h.service, "sales");
  other = await addTenant(h.service, "Other");

  // Monday 3 March: two answered questions (one rated good), a lead, an operator reply, ended.
  ids.a = await openConversation(h, {}, "shop");
  const install = await send("shop", ids.a, "How do I install Widgetron?");
  expect(install.cannot_answer).toBe(false);
  expect(install.sources.map((s) => s.name)).toContain("install.md");
  await rate("shop", ids.a, install.message_id, "good");
  const config = await send("shop", ids.a, "Does the installer create a config file?");
  expect(config.cannot_answer).toBe(false);
  expect((await h.call(`/chatbots/shop/conversations/${ids.a}/leads`, { json: { email: "ana@example.com" } })).status).toBe(201);
  expect((await h.call(`/conversations/${ids.a}/messages`, { json: { message: "Happy to help further!", role: "assistant" } })).status).toBe(201);
  expect((await h.call(`/chatbots/shop/conversations/${ids.a}/end`, { method: "POST" })).status).toBe(200);
  await moveTo(ids.a, "2025-03-03");

  // Wednesday 5 March: an answer rated bad, then a person took over.
  ids.b = await openConversation(h, {}, "shop");
  const price = await send("shop", ids.b, "How much does the Pro plan cost?");
  expect(price.cannot_answer).toBe(false);
  await rate("shop", ids.b, price.message_id, "bad");
  // Handed to a person twice: one handoff.
  for (let i = 0; i < 2; i++) {
    expect((await h.call(`/conversations/${ids.b}/handoff`, { json: { reason: "wants a human" } })).status).toBe(200);
    expect((await h.call(`/conversations/${ids.b}/release`, { method: "POST" })).status).toBe(200);
  }
  await moveTo(ids.b, "2025-03-05");

  // The sales bot, same organisation, same Wednesday.
  ids.sales = await openConversation(h, {}, "sales");
  await send("sales", ids.sales, "How do I install Widgetron?");
  await moveTo(ids.sales, "2025-03-05");

  // Monday 10 and Wednesday 12 March: the same question in other words, unanswerable.
  ids.c = await openConversation(h, {}, "shop");
  expect((await send("shop", ids.c, "Do you ship to Mars?")).cannot_answer).toBe(true);
  await moveTo(ids.c, "2025-03-10");
  ids.d = await openConversation(h, {}, "shop");
  expect((await send("shop", ids.d, "shipping to mars??")).cannot_answer).toBe(true);
  await moveTo(ids.d, "2025-03-12");
});

afterAll(async () => {
  await h?.close();
});

const zero = { conversations: 0, visitor_messages: 0, answered: 0, cannot_answer: 0, good_ratings: 0, bad_ratings: 0, leads: 0, handoffs: 0 };

describe("GET /analytics", () => {
  it("counts per UTC day, fills the days without activity with zeros, and totals", async () => {
    const res = await h.call("/analytics?chatbot=shop&since=2025-03-03&until=2025-03-12");
    expect(res.status, res.text).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({ chatbot: "shop", interval: "day", since: "2025-03-03T00:00:00.000Z", until: "2025-03-12T23:59:59.999Z", timezone: "UTC" });
    expect(data.buckets.map((b: { start: string }) => b.start)).toEqual([
      "2025-03-03", "2025-03-04", "2025-03-05", "2025-03-06", "2025-03-07", "2025-03-08", "2025-03-09", "2025-03-10", "2025-03-11", "2025-03-12",
    ]);
    const byDay = Object.fromEntries(data.buckets.map(({ start, end, ...counts }: { start: string; end: string }) => [start, counts]));
    // The operator's reply is not the bot answering.
    expect(byDay["2025-03-03"]).toEqual({ ...zero, conversations: 1, visitor_messages: 2, answered: 2, good_ratings: 1, leads: 1 });
    expect(byDay["2025-03-04"]).toEqual(zero);
    expect(byDay["2025-03-05"]).toEqual({ ...zero, conversations: 1, visitor_messages: 1, answered: 1, bad_ratings: 1, handoffs: 1 });
    expect(byDay["2025-03-08"]).toEqual(zero);
    expect(byDay["2025-03-10"]).toEqual({ ...zero, conversations: 1, visitor_messages: 1, cannot_answer: 1 });
    expect(byDay["2025-03-12"]).toEqual({ ...zero, conversations: 1, visitor_messages: 1, cannot_answer: 1 });
    expect(data.totals).toEqual({ conversations: 4, visitor_messages: 5, answered: 3, cannot_answer: 2, good_ratings: 1, bad_ratings: 1, leads: 1, handoffs: 1 });
  });

  it("reads a date-time without an offset as UTC", async () => {
    const res = await h.call("/analytics?chatbot=shop&since=2025-03-05T09:00&until=2025-03-05T10:00:00");
    expect(res.body.data).toMatchObject({ since: "2025-03-05T09:00:00.000Z", until: "2025-03-05T10:00:00.000Z" });
    expect(res.body.data.totals.conversations).toBe(1);
  });

  it("groups by weeks starting Monday, and counts only what lies inside the range", async () => {
    const res = await h.call("/analytics?chatbot=shop&since=2025-03-04&until=2025-03-12&interval=week");
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.buckets).toEqual([
      // Monday 3 March is in the first week but before `since`: not counted.
      { start: "2025-03-03", end: "2025-03-09", ...zero, conversations: 1, visitor_messages: 1, answered: 1, bad_ratings: 1, handoffs: 1 },
      { start: "2025-03-10", end: "2025-03-16", ...zero, conversations: 2, visitor_messages: 2, cannot_answer: 2 },
    ]);
  });

  it("covers every chatbot of the organisation without a chatbot, and none of another organisation's", async () => {
    const all = await h.call("/analytics?since=2025-03-01&until=2025-03-31");
    expect(all.body.data.chatbot).toBeNull();
    expect(all.body.data.totals).toMatchObject({ conversations: 5, visitor_messages: 6 });
    const theirs = await h.call("/analytics?since=2025-03-01&until=2025-03-31", { key: other.key.key });
    expect(theirs.status).toBe(200);
    expect(theirs.body.data.totals).toEqual(zero);
  });

  it("defaults to the last 30 UTC days, by day", async () => {
    const res = await h.call("/analytics");
    expect(res.status, res.text).toBe(200);
    const { buckets, interval, until } = res.body.data;
    expect(interval).toBe("day");
    expect(buckets).toHaveLength(30);
    expect(buckets.at(-1).start).toBe(new Date().toISOString().slice(0, 10));
    expect(Date.now() - Date.parse(until)).toBeLessThan(60_000);
  });

  it("422 on bad values: unknown interval, bad dates, reversed range, too many buckets", async () => {
    const cases: [string, string][] = [
      ["interval=month", "interval"],
      ["since=yesterday", "since"],
      ["until=2025-13-40", "until"],
      ["since=2025-03-10&until=2025-03-01", "since"],
      ["since=2020-01-01&until=2025-01-01", "since"],
    ];
    for (const [query, field] of cases) {
      const res = await h.call(`/analytics?${query}`);
      expect(res.status, query).toBe(422);
      expect(Object.keys(res.body.errors), query).toEqual([field]);
    }
    // Five years fit in weeks, ten do not.
    expect((await h.call("/analytics?since=2020-01-01&until=2025-01-01&interval=week")).status).toBe(200);
    expect((await h.call("/analytics?since=2015-01-01&until=2025-01-01&interval=week")).status).toBe(422);
  });
});

describe("GET /analytics/unanswered", () => {
  it("groups near-duplicate questions, with counts, last asked and an example conversation", async () => {
    const res = await h.call("/analytics/unanswered?chatbot=shop&since=2025-03-01&until=2025-03-31");
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual([
      {
        question: "shipping to mars??",
        count: 2,
        cannot_answer: 2,
        bad_ratings: 0,
        last_asked_at: "2025-03-12T10:00:00.000Z",
        example_conversation_id: ids.d,
        wordings: ["shipping to mars??", "Do you ship to Mars?"],
      },
      {
        question: "How much does the Pro plan cost?",
        count: 1,
        cannot_answer: 0,
        bad_ratings: 1,
        last_asked_at: "2025-03-05T10:00:00.000Z",
        example_conversation_id: ids.b,
        wordings: ["How much does the Pro plan cost?"],
      },
    ]);
    expect(res.body.meta).toEqual({ current_page: 1, per_page: 20, total: 2, last_page: 1, from: 1, to: 2 });
  });

  it("pages like GET /leads and respects the range", async () => {
    const second = await h.call("/analytics/unanswered?since=2025-03-01&until=2025-03-31&per_page=1&page=2");
    expect(second.body.data.map((g: { question: string }) => g.question)).toEqual(["How much does the Pro plan cost?"]);
    expect(second.body.meta).toMatchObject({ current_page: 2, per_page: 1, total: 2, last_page: 2 });
    expect(second.body.links.prev).toBe("/api/v1/analytics/unanswered?since=2025-03-01&until=2025-03-31&per_page=1&page=1");
    const early = await h.call("/analytics/unanswered?since=2025-03-01&until=2025-03-10");
    expect(early.body.data.map((g: { count: number; example_conversation_id: number }) => [g.count, g.example_conversation_id])).toEqual([
      [1, ids.c],
      [1, ids.b],
    ]);
  });

  it("422 on bad values", async () => {
    for (const query of ["per_page=0", "page=abc", "since=2025-03-10&until=2025-03-01", "until=soon"]) {
      expect((await h.call(`/analytics/unanswered?${query}`)).status, query).toBe(422);
    }
  });
});

describe("GET /analytics/sources", () => {
  it("lists every document by citations, never-cited ones with 0", async () => {
    const res = await h.call("/analytics/sources?chatbot=shop");
    expect(res.status, res.text).toBe(200);
    const rows = res.body.data as { name: string; cited: number; chatbot: string; last_cited_at: string | null }[];
    expect(rows.map((r) => r.name)).toEqual(["install.md", "billing.md", "faq.md"]);
    expect(rows.map((r) => r.cited)).toEqual([2, 1, 0]);
    expect(rows.every((r) => r.chatbot === "shop")).toBe(true);
    expect(rows[2]!.last_cited_at).toBeNull();
    const all = await h.call("/analytics/sources?per_page=100");
    const demo = await h.call("/analytics/sources?chatbot=demo");
    expect(all.body.meta.total).toBe(3 + 2 + demo.body.meta.total);
    expect(all.body.data.filter((r: { chatbot: string }) => r.chatbot === "sales").map((r: { name: string; cited: number }) => [r.name, r.cited])).toEqual([
      ["install.md", 1],
      ["billing.md", 0],
    ]);
  });

  it("422 on bad paging", async () => {
    expect((await h.call("/analytics/sources?per_page=101")).status).toBe(422);
  });
});

describe("refusals", () => {
  it("another organisation's chatbot or an unknown slug is 403 on every analytics route; no key is 401", async () => {
    for (const path of ["/analytics", "/analytics/unanswered", "/analytics/sources"]) {
      const theirs = await h.call(`${path}?chatbot=shop`, { key: other.key.key });
      expect(theirs.status, path).toBe(403);
      expect(theirs.body).toEqual({ success: false, message: "Chatbot not found or access denied" });
      expect((await h.call(`${path}?chatbot=${other.chatbot.slug}`)).status, path).toBe(403);
      expect((await h.call(`${path}?chatbot=nope`)).status, path).toBe(403);
      expect((await h.call(path, { key: null })).status, path).toBe(401);
    }
  });
});

// The CLI prints what the service calls tested above on both engines return: it runs here on SQLite, and against
// PostgreSQL (`--database-url`) in test/scale, so each command does not start a process per engine.
describe.skipIf(testEngine === "postgres")("chatsvc stats", { timeout: 60_000 }, () => {
  const stats = (...args: string[]) => runCli([...h.database.cliArgs, "stats", ...args]);

  it("prints the API's figures as JSON, and as tables", async () => {
    const json = await stats("shop", "--since", "2025-03-03", "--until", "2025-03-12", "--interval", "week", "--json");
    expect(json.stderr).toBe("");
    const out = json.json();
    const api = await h.call("/analytics?chatbot=shop&since=2025-03-03&until=2025-03-12&interval=week");
    expect(out.overview).toEqual(api.body.data);
    expect(out.unanswered.data).toEqual((await h.call("/analytics/unanswered?chatbot=shop&since=2025-03-03&until=2025-03-12")).body.data);
    expect(out.sources.data.map((s: { name: string; cited: number }) => [s.name, s.cited])).toEqual([["install.md", 2], ["billing.md", 1], ["faq.md", 0]]);

    const table = await stats("shop", "--since", "2025-03-03", "--until", "2025-03-12");
    expect(table.code).toBe(0);
    const lines = table.stdout.split("\n");
    expect(lines.find((l) => l.startsWith("2025-03-03"))!.split(/\s+/)).toEqual(["2025-03-03", "1", "2", "2", "0", "1", "0", "1", "0"]);
    expect(lines.find((l) => l.startsWith("2025-03-04"))!.split(/\s+/)).toEqual(["2025-03-04", "0", "0", "0", "0", "0", "0", "0", "0"]);
    expect(lines.find((l) => l.startsWith("total"))!.split(/\s+/)).toEqual(["total", "4", "5", "3", "2", "1", "1", "1", "1"]);
    expect(table.stdout).toMatch(/^2\s+2\s+0\s+2025-03-12T10:00:00.000Z\s+\d+\s+shipping to mars\?\?$/m);
    expect(table.stdout).toMatch(/^0\s+-\s+shop\s+faq.md$/m);
  });

  it("refuses an unknown chatbot and bad values", async () => {
    const unknown = await stats("nope");
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/^error: /);
    const reversed = await stats("shop", "--since", "2025-03-10", "--until", "2025-03-01");
    expect(reversed.code).not.toBe(0);
    expect(reversed.stderr).toContain("since");
    // Two organisations: without a chatbot, the organisation must be named.
    expect((await stats()).stderr).toContain("--org");
    expect((await stats("--org", String(other.organization.id), "--json")).json().overview.totals).toEqual(zero);
  });
});
