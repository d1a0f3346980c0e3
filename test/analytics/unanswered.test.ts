import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { questionKey, type QuestionGroup } from "../../src/analytics/questions.js";
import { testEngine } from "../support/database.js";
import { startHarness, type Harness } from "../support/harness.js";
import { sqlOf } from "../support/sql.js";
import { openConversation } from "../chat/helpers.js";
import { moveTo, rate, send, shopAndSales } from "./helpers.js";

/*
 * GET /analytics/unanswered groups the rows of unanswered_questions, which triggers keep in the
 * transaction of each write and the storage layer keys. These tests change rows every way the
 * service does (fallbacks, ratings back and forth, regeneration, handoffs, moved times, erasure,
 * retention, deleting a chatbot, the migration's backfill) and check, after each, the table
 * against the replies themselves, and the report (every page) against the grouping the report
 * made before the table existed, done here from the messages.
 */

let h: Harness;
let org: number;
const DAY = 86_400_000;

interface Row {
  reply_id: number;
  chatbot_id: number;
  conversation_id: number;
  asked_at: string;
  cannot_answer: number;
  bad_rating: number;
  question: string;
  question_key: string | null;
}

/** What unanswered_questions must hold, from the messages: each visible reply that could not answer or was rated bad, with the visitor message before it. */
async function rowsFromMessages(): Promise<Row[]> {
  const messages = await sqlOf(h.service).all<{ id: number; conversation_id: number; chatbot_id: number; role: string; content: string; rating: string | null; regenerated: unknown; cannot_answer: unknown; created_at: string }>(
    "SELECT m.id, m.conversation_id, c.chatbot_id, m.role, m.content, m.rating, m.regenerated, m.cannot_answer, m.created_at FROM messages m JOIN conversations c ON c.id = m.conversation_id ORDER BY m.id",
  );
  const lastQuestion = new Map<number, string>();
  const rows: Row[] = [];
  for (const m of messages) {
    if (m.role === "user") lastQuestion.set(m.conversation_id, m.content);
    const cannot = m.cannot_answer === 1 || m.cannot_answer === true;
    const bad = m.rating === "bad";
    const question = lastQuestion.get(m.conversation_id);
    if (m.role !== "assistant" || m.regenerated === 1 || m.regenerated === true || !(cannot || bad) || question === undefined) continue;
    const text = question.trim();
    rows.push({ reply_id: m.id, chatbot_id: m.chatbot_id, conversation_id: m.conversation_id, asked_at: m.created_at, cannot_answer: cannot ? 1 : 0, bad_rating: bad ? 1 : 0, question: text, question_key: questionKey(text) });
  }
  return rows;
}

const tableRows = () =>
  sqlOf(h.service).all<Row>("SELECT reply_id, chatbot_id, conversation_id, asked_at, cannot_answer, bad_rating, question, question_key FROM unanswered_questions ORDER BY reply_id");

/** The report as it was computed before unanswered_questions: rows newest first, grouped by key, most asked then most recent first. */
function groupedAsBefore(rows: Row[], chatbotIds: number[], since: string, until: string): QuestionGroup[] {
  const scoped = rows
    .filter((r) => chatbotIds.includes(r.chatbot_id) && r.asked_at >= since && r.asked_at <= until)
    .sort((a, b) => (a.asked_at < b.asked_at ? 1 : a.asked_at > b.asked_at ? -1 : b.reply_id - a.reply_id));
  const groups = new Map<string, QuestionGroup>();
  for (const row of scoped) {
    const key = questionKey(row.question);
    let group = groups.get(key);
    if (!group) {
      group = { question: row.question, count: 0, cannot_answer: 0, bad_ratings: 0, last_asked_at: row.asked_at, example_conversation_id: row.conversation_id, wordings: [] };
      groups.set(key, group);
    }
    group.count++;
    group.cannot_answer += row.cannot_answer;
    group.bad_ratings += row.bad_rating;
    if (group.wordings.length < 5 && !group.wordings.includes(row.question)) group.wordings.push(row.question);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || (a.last_asked_at < b.last_asked_at ? 1 : a.last_asked_at > b.last_asked_at ? -1 : 0));
}

async function botIds(slug?: string): Promise<number[]> {
  const bots = await sqlOf(h.service).all<{ id: number }>(slug ? "SELECT id FROM chatbots WHERE slug = ?" : "SELECT id FROM chatbots WHERE organization_id = ?", slug ?? org);
  return bots.map((b) => b.id);
}

/** Every page of the report at `perPage`, checked for consistent meta, concatenated. */
async function reported(query: string, perPage: number): Promise<QuestionGroup[]> {
  const all: QuestionGroup[] = [];
  for (let page = 1; ; page++) {
    const res = await h.call(`/analytics/unanswered?${query}&per_page=${perPage}&page=${page}`);
    expect(res.status, res.text).toBe(200);
    all.push(...res.body.data);
    expect(res.body.meta.current_page).toBe(page);
    if (page >= res.body.meta.last_page) {
      expect(res.body.meta.total).toBe(all.length);
      return all;
    }
  }
}

const RANGES: [string, string][] = [
  ["2025-04-01T00:00:00.000Z", "2025-04-30T23:59:59.999Z"],
  ["2025-04-02T08:15:00.000Z", "2025-04-10T12:00:00.000Z"],
];

/** The table equals the rows (keys included: the service's writes key in their own transaction), and the report equals the old grouping. */
async function expectMatchesRows({ keyedByReport = false } = {}) {
  const rows = await rowsFromMessages();
  if (!keyedByReport) expect(await tableRows()).toEqual(rows);
  for (const slug of [undefined, "shop"]) {
    const ids = await botIds(slug);
    for (const [since, until] of RANGES) {
      const query = `since=${since}&until=${until}${slug ? `&chatbot=${slug}` : ""}`;
      const expected = groupedAsBefore(rows, ids, since, until);
      expect(await reported(query, 100), query).toEqual(expected);
      expect(await reported(query, 2), query).toEqual(expected);
    }
  }
  expect(await tableRows()).toEqual(rows);
}

let ids: Record<string, number>;
let replies: Record<string, number>;

beforeAll(async () => {
  h = await startHarness();
  org = h.tenant.organization.id;
  const seeded = await shopAndSales(h);
  ({ ids, replies } = seeded);
  const { conversation } = seeded;
  // Near-duplicates, answered questions, a question of stop words only, and ties on time across conversations.
  await conversation("a", "shop", "2025-04-02T08:15:00.000Z", { visitor_id: "v-a" }, ["Do you ship to Mars?", "How do I install Widgetron?"]);
  await conversation("b", "shop", "2025-04-03T10:00:00.000Z", { visitor_id: "v-b" }, ["shipping to mars??", "Can I pay with seashells?"]);
  await conversation("c", "sales", "2025-04-03T10:00:00.000Z", { visitor_id: "v-a" }, ["Can I pay in seashells", "What is it?"]);
  await conversation("d", "shop", "2025-04-03T10:00:00.000Z", { visitor_id: "v-d" }, ["Do you ship to Mars?", "How much does the Pro plan cost?"]);
  await conversation("e", "shop", "2025-04-10T12:00:00.000Z", { visitor_id: "v-e" }, ["What is it?", "Ship to mars, do you?"]);
  // A visitor message with spaces around it (the account-level route stores it as given), then a fallback.
  ids.f = await openConversation(h, { visitor_id: "v-f" }, "shop");
  expect((await h.call(`/conversations/${ids.f}/messages`, { json: { message: "  Do you ship to Mars?\n", role: "user" } })).status).toBe(201);
  replies.f0 = (await send(h, "shop", ids.f, "Do you ship to Mars?")).message_id!;
  await moveTo(h, ids.f, "2025-04-11T09:00:00.000Z");
});

afterAll(async () => {
  await h?.close();
});

describe("unanswered questions", () => {
  it("match the replies after turns and moved times, fallbacks grouped as before", async () => {
    const rows = await rowsFromMessages();
    expect(rows.length).toBeGreaterThanOrEqual(6);
    expect(rows.every((r) => r.cannot_answer === 1)).toBe(true);
    await expectMatchesRows();
  });

  it("follow a rating from good to bad to cleared, on an answered reply and on a fallback", async () => {
    const answered = replies.a1!;
    expect((await rowsFromMessages()).some((r) => r.reply_id === answered)).toBe(false);
    await rate(h, "shop", ids.a!, answered, "good");
    await expectMatchesRows();
    await rate(h, "shop", ids.a!, answered, "bad");
    expect((await tableRows()).find((r) => r.reply_id === answered)).toMatchObject({ bad_rating: 1, cannot_answer: 0, question: "How do I install Widgetron?" });
    await expectMatchesRows();
    await rate(h, "shop", ids.a!, answered, "good");
    await expectMatchesRows();
    await rate(h, "shop", ids.a!, answered, "bad");
    // The API never clears a rating; SQL does, and the triggers follow.
    await sqlOf(h.service).run("UPDATE messages SET rating = NULL WHERE id = ?", answered);
    expect((await tableRows()).some((r) => r.reply_id === answered)).toBe(false);
    await expectMatchesRows();

    // A fallback rated bad counts once, in both columns; rated good it stays a fallback.
    await rate(h, "shop", ids.d!, replies.d0!, "bad");
    expect((await tableRows()).find((r) => r.reply_id === replies.d0)).toMatchObject({ bad_rating: 1, cannot_answer: 1 });
    await expectMatchesRows();
    await rate(h, "shop", ids.d!, replies.d1!, "bad");
    await rate(h, "shop", ids.d!, replies.d0!, "good");
    await expectMatchesRows();
  });

  it("follow a regenerated reply: the old one leaves, the new one is the latest ask", async () => {
    const regen = await h.call(`/chatbots/shop/conversations/${ids.e}/messages/${replies.e1}/regenerate`, { method: "POST" });
    expect(regen.status, regen.text).toBe(200);
    expect((await tableRows()).some((r) => r.reply_id === replies.e1)).toBe(false);
    await moveTo(h, ids.e!, "2025-04-10T12:00:00.000Z");
    await expectMatchesRows();
  });

  it("take the visitor's message during a handoff as the question of an operator reply rated bad", async () => {
    expect((await h.call(`/conversations/${ids.b}/handoff`, { json: {} })).status).toBe(200);
    // While a person handles it, the visitor's message is stored without a bot reply.
    expect((await send(h, "shop", ids.b!, "Is anyone there about the seashells?")).message_id ?? null).toBeNull();
    const operator = await h.call(`/conversations/${ids.b}/messages`, { json: { message: "Yes, we take them on Tuesdays.", role: "assistant" } });
    expect(operator.status, operator.text).toBe(201);
    expect((await h.call(`/conversations/${ids.b}/release`, { method: "POST" })).status).toBe(200);
    await rate(h, "shop", ids.b!, operator.body.data.id, "bad");
    expect((await tableRows()).find((r) => r.reply_id === operator.body.data.id)).toMatchObject({ question: "Is anyone there about the seashells?", cannot_answer: 0 });
    await moveTo(h, ids.b!, "2025-04-03T10:00:00.000Z");
    await expectMatchesRows();
  });

  it("are what the migration's backfill finds, keyed by the first report", async () => {
    const before = await reported("since=2025-04-01&until=2025-04-30", 100);
    const dir = join(import.meta.dirname, "..", "..", "drizzle", testEngine === "postgres" ? "postgres" : "sqlite");
    const file = readdirSync(dir).find((name) => name.endsWith("_unanswered_questions_rows.sql"));
    const backfill = readFileSync(join(dir, file!), "utf8")
      .split("--> statement-breakpoint")
      .map((s) => s.replace(/^--.*$/gm, "").trim())
      .find((s) => /^INSERT INTO .unanswered_questions./.test(s));
    const sql = sqlOf(h.service);
    await sql.exec("DELETE FROM unanswered_questions");
    await sql.exec(backfill!);
    expect((await tableRows()).every((r) => r.question_key === null)).toBe(true);
    expect(await reported("since=2025-04-01&until=2025-04-30", 100)).toEqual(before);
    await expectMatchesRows({ keyedByReport: true });
  });

  it("take an erased visitor's conversations back out", async () => {
    const res = await h.call("/visitors?visitor_id=v-a", { method: "DELETE" });
    expect(res.status, res.text).toBe(200);
    expect((await tableRows()).some((r) => r.conversation_id === ids.a || r.conversation_id === ids.c)).toBe(false);
    await expectMatchesRows();
  });

  it("take conversations removed by retention back out", async () => {
    const now = new Date(Date.parse("2025-04-11T09:00:00.000Z") + 5 * DAY);
    await h.service.orgs.update(org, { retention_days: 10 });
    const [result] = await h.service.retention.run({ now });
    expect(result!.deleted.conversations).toBeGreaterThan(0);
    await h.service.orgs.update(org, { retention_days: null });
    await expectMatchesRows();
  });

  it("go with a deleted chatbot", async () => {
    const id = await openConversation(h, {}, "sales");
    await send(h, "sales", id, "Do you ship to Mars?");
    await moveTo(h, id, "2025-04-12T09:00:00.000Z");
    await expectMatchesRows();
    expect((await tableRows()).some((r) => r.conversation_id === id)).toBe(true);
    await h.service.chatbots.delete("sales");
    expect((await tableRows()).some((r) => r.conversation_id === id)).toBe(false);
    await expectMatchesRows();
  });
});
