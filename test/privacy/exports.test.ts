import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExports } from "../../src/core/exports.js";
import type { ConversationStore } from "../../src/core/storage/index.js";
import { internalsOf } from "../../src/service.js";
import { addTenant, startHarness, type Harness } from "../support/harness.js";
import { sqlOf } from "../support/sql.js";
import { csvObjects } from "./csv.js";

let h: Harness;
let org: number;
let tricky: number;
let empty: number;
let old: number;
let otherKey: string;

// What visitors write lands in cells an operator opens in a spreadsheet.
const TRICKY = {
  comma: "one, two, three",
  quotes: 'she said "hello"',
  newline: "line one\nline two\r\nline three",
  formula: "=HYPERLINK(\"http://evil.example\",\"click\")",
  plus: "+44 20 7946 0000",
  minus: "-2+3",
  at: "@SUM(A1:A9)",
};

beforeAll(async () => {
  h = await startHarness();
  org = h.tenant.organization.id;
  await h.service.chatbots.create({ organization_id: org, slug: "sales", name: "Sales" });
  const start = async (slug: string, input: object) => (await h.service.conversations.start(org, slug, input)).conversation_id;
  tricky = await start("demo", { visitor_id: "v-1", visitor_name: 'Ana, "the" =boss', visitor_email: "ana@example.com", metadata: { plan: "pro" } });
  for (const message of Object.values(TRICKY)) await h.service.chat.post(org, tricky, { message, role: "user" });
  await h.service.chat.post(org, tricky, { message: "**Thanks**, we will call you.", role: "assistant" });
  empty = await start("sales", { visitor_id: "v-2" });
  old = await start("demo", { visitor_id: "v-3" });
  await h.service.chat.post(org, old, { message: "an old question", role: "user" });
  await sqlOf(h.service).run("UPDATE conversations SET started_at = ? WHERE id = ?", "2020-01-15T10:00:00.000Z", old);
  await h.service.leads.capture(org, "demo", tricky, { name: "=cmd|' /C calc'!A0", email: "ana@example.com", phone: "+44 20 7946 0000", message: TRICKY.newline });

  // Another organisation with the same visitor: never in this organisation's exports.
  const other = await addTenant(h.service, "Other");
  otherKey = other.key.key;
  const theirs = (await h.service.conversations.start(other.organization.id, other.chatbot.slug, { visitor_id: "v-1", visitor_email: "ana@example.com" })).conversation_id;
  await h.service.chat.post(other.organization.id, theirs, { message: "their secret", role: "user" });
  await h.service.leads.capture(other.organization.id, other.chatbot.slug, theirs, { email: "ana@example.com" });
});
afterAll(() => h.close());

const download = async (path: string, key: string | null = h.tenant.key.key) => {
  const res = await fetch(`${h.api}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, type: res.headers.get("content-type"), disposition: res.headers.get("content-disposition"), text: await res.text() };
};
const jsonLines = (text: string) => text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));

describe("GET /conversations/export", () => {
  it("JSONL (the default): one conversation per line with its messages, oldest first, only the caller's organisation", async () => {
    const res = await download("/conversations/export");
    expect(res.status).toBe(200);
    expect(res.type).toBe("application/x-ndjson; charset=utf-8");
    expect(res.disposition).toMatch(/^attachment; filename="conversations-\d{4}-\d{2}-\d{2}\.jsonl"$/);
    expect(res.text.endsWith("\n")).toBe(true);
    const lines = jsonLines(res.text);
    expect(lines.map((l) => l.id)).toEqual([tricky, empty, old]);
    const first = lines[0];
    expect(first).toMatchObject({ visitor_id: "v-1", visitor: { name: 'Ana, "the" =boss', email: "ana@example.com" }, agent: { slug: "demo" }, metadata: { plan: "pro" }, message_count: 8, is_ended: false });
    // JSONL carries text as it is: only CSV cells are neutralised.
    expect(first.messages.slice(0, 7).map((m: { content: string }) => m.content)).toEqual(Object.values(TRICKY));
    expect(first.messages[7]).toMatchObject({ role: "assistant", content: "<p><strong>Thanks</strong>, we will call you.</p>", rating: null, cannot_answer: false });
    expect(first.messages[7].content).not.toContain("svc-branding");
    expect(lines[1]).toMatchObject({ agent: { slug: "sales" }, messages: [], message_count: 0 });
    expect(res.text).not.toContain("their secret");
  });

  it("CSV: one message per row, RFC 4180 quoting, formula cells neutralised, a conversation without messages as one row", async () => {
    const res = await download("/conversations/export?format=csv");
    expect(res.status).toBe(200);
    expect(res.type).toBe("text/csv; charset=utf-8; header=present");
    expect(res.disposition).toMatch(/filename="conversations-\d{4}-\d{2}-\d{2}\.csv"$/);
    const rows = csvObjects(res.text);
    const ofTricky = rows.filter((r) => r.conversation_id === String(tricky));
    expect(ofTricky.map((r) => r.content).slice(0, 7)).toEqual([
      TRICKY.comma,
      TRICKY.quotes,
      TRICKY.newline,
      `'${TRICKY.formula}`,
      `'${TRICKY.plus}`,
      `'${TRICKY.minus}`,
      `'${TRICKY.at}`,
    ]);
    expect(ofTricky[0]).toMatchObject({ visitor_name: 'Ana, "the" =boss', visitor_email: "ana@example.com", chatbot: "demo", role: "user", rating: "" });
    expect(rows.filter((r) => r.conversation_id === String(empty))).toEqual([
      expect.objectContaining({ chatbot: "sales", visitor_id: "v-2", message_id: "", content: "" }),
    ]);
    expect(rows).toHaveLength(8 + 1 + 1);
    expect(res.text).not.toContain("their secret");
  });

  it("filters by chatbot and by start time (inclusive)", async () => {
    expect(jsonLines((await download("/conversations/export?chatbot=sales")).text).map((l) => l.id)).toEqual([empty]);
    expect(jsonLines((await download("/conversations/export?until=2020-12-31")).text).map((l) => l.id)).toEqual([old]);
    expect(jsonLines((await download("/conversations/export?since=2020-01-15T10:00:00Z&until=2020-01-15T10:00:00Z")).text).map((l) => l.id)).toEqual([old]);
    expect(jsonLines((await download("/conversations/export?since=2021-01-01")).text).map((l) => l.id)).toEqual([tricky, empty]);
    const csv = csvObjects((await download("/conversations/export?format=csv&chatbot=demo&until=2020-12-31")).text);
    expect(csv.map((r) => r.content)).toEqual(["an old question"]);
  });

  it("refuses bad input with 422 before streaming anything, and another organisation's slug like an unknown one", async () => {
    for (const query of ["format=xml", "since=yesterday", "since=2025-02-01&until=2025-01-01", "chatbot=other-bot", "chatbot=nope"]) {
      const res = await h.call(`/conversations/export?${query}`);
      expect(res.status, query).toBe(422);
      expect(res.headers.get("content-type"), query).toMatch(/^application\/json/);
      expect(res.body.success, query).toBe(false);
    }
    expect((await h.call("/conversations/export?format=xml")).body.errors).toHaveProperty("format");
    expect((await download("/conversations/export", null)).status).toBe(401);
  });

  it("the other organisation's key exports only its own conversation", async () => {
    const lines = jsonLines((await download("/conversations/export", otherKey)).text);
    expect(lines).toHaveLength(1);
    expect(lines[0].messages.map((m: { content: string }) => m.content)).toEqual(["their secret"]);
  });

  it("reads the database in bounded pages, one page per chunk the consumer pulls", async () => {
    const { storage } = internalsOf(h.service);
    for (let i = 0; i < 23; i++) await h.service.conversations.start(org, "sales", { visitor_id: `bulk-${i}` });
    const pages: number[] = [];
    // The real store, counting what each read returned.
    const conversations: ConversationStore = {
      ...storage.conversations,
      async *exportPages(filter, size) {
        for await (const page of storage.conversations.exportPages(filter, size)) {
          pages.push(page.length);
          yield page;
        }
      },
    };
    const exports = createExports({ conversations, leads: storage.leads }, h.service.chatbots, { pageSize: 10 });
    const exported = await exports.conversations(org, { chatbot: "sales" });
    expect(pages).toEqual([]); // nothing is read before the stream is pulled
    const chunks = exported.chunks()[Symbol.asyncIterator]();
    await chunks.next();
    expect(pages).toEqual([10]);
    await chunks.next();
    expect(pages).toEqual([10, 10]);
    let lines = 0;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) lines += next.value.split("\n").length - 1;
    expect(pages).toEqual([10, 10, 4]); // 24 conversations of `sales`
    expect(lines).toBe(4);
  });
});

describe("GET /leads/export", () => {
  it("CSV (the default) with formula cells neutralised; JSONL on request; only the caller's organisation", async () => {
    const res = await download("/leads/export");
    expect(res.status).toBe(200);
    expect(res.type).toBe("text/csv; charset=utf-8; header=present");
    expect(res.disposition).toMatch(/filename="leads-\d{4}-\d{2}-\d{2}\.csv"$/);
    const rows = csvObjects(res.text);
    expect(rows).toEqual([
      expect.objectContaining({ conversation_id: String(tricky), chatbot: "demo", name: "'=cmd|' /C calc'!A0", email: "ana@example.com", phone: "'+44 20 7946 0000", message: TRICKY.newline }),
    ]);
    const jsonl = await download("/leads/export?format=jsonl");
    expect(jsonl.type).toBe("application/x-ndjson; charset=utf-8");
    expect(jsonLines(jsonl.text)).toEqual([expect.objectContaining({ conversation_id: tricky, name: "=cmd|' /C calc'!A0", agent: expect.objectContaining({ slug: "demo" }) })]);
    expect(jsonLines((await download("/leads/export?format=jsonl&chatbot=sales")).text)).toEqual([]);
    expect((await h.call("/leads/export?format=pdf")).status).toBe(422);
    expect((await h.call("/leads/export?chatbot=other-bot")).status).toBe(422);
    expect(csvObjects((await download("/leads/export", otherKey)).text).map((r) => r.chatbot)).toEqual(["other-bot"]);
  });
});
