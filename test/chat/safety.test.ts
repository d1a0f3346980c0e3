import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toPlainText } from "../../src/index.js";
import { startHarness, type Harness } from "../support/harness.js";
import { BRANDING, ingestDocs, openConversation } from "./helpers.js";
import { sqlOf } from "../support/sql.js";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

const PAYLOADS = [
  "<script>alert('widgetron')</script>",
  '<img src="https://tracker.example/p.gif" onerror="alert(1)">',
  "[widgetron docs](javascript:alert(2))",
  '<a href="javascript:alert(3)">widgetron link</a>',
  '<svg onload="alert(4)"><circle r="1"/></svg>',
  '<iframe src="https://evil.example"></iframe>',
  '<p style="display:none" onclick="alert(5)">widgetron hidden</p>',
  '<div class="svc-branding">widgetron forged branding</div>',
  '<form action="https://evil.example"><input name="card"></form>',
];

/** Reply HTML without the one legitimate branding element at its end. */
const body = (html: string) => html.replace(/<div class="svc-branding"><a href="[^"]*" target="_blank" rel="noopener noreferrer"><img [^>]*> [^<]*<\/a><\/div>$/, "");

function expectSafe(html: string) {
  const content = body(html);
  expect(content).not.toMatch(/<script|<iframe|<svg|<form|<input|<img|<style/i);
  expect(content).not.toMatch(/\son[a-z]+\s*=/i);
  expect(content).not.toMatch(/javascript:/i);
  expect(content).not.toMatch(/style=/i);
  expect(content).not.toContain("svc-branding");
}

describe("XSS", () => {
  it("replies quoting a hostile knowledge base are sanitised, in the reply and in history", async () => {
    await ingestDocs(h.service, "demo", [{ name: "hostile.md", content: PAYLOADS.map((p) => `Widgetron fact: ${p} is widgetron.`).join("\n\n") }]);
    const id = await openConversation(h);
    // One question per payload that carries text, so the extractive model quotes that hostile sentence.
    for (const text of ["widgetron link", "widgetron docs", "widgetron hidden", "widgetron forged branding"]) {
      const res = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: { message: `Which widgetron fact mentions ${text}?` } });
      expect(res.status).toBe(200);
      expect(res.body.data.cannot_answer).toBe(false);
      // The extractive model did quote the hostile sentence: its text is there, its markup is not.
      expect(res.body.data.reply).toContain(text);
      expectSafe(res.body.data.reply);
    }
    const history = (await h.call(`/chatbots/demo/conversations/${id}`)).body.data;
    const replies = history.messages.filter((m: { role: string }) => m.role === "assistant");
    expect(replies).toHaveLength(4);
    for (const message of replies) expectSafe(message.content);
  });

  it("visitor text comes back verbatim as plain text, and the reply to it is safe", async () => {
    await ingestDocs(h.service);
    const id = await openConversation(h);
    const message = `How do I install Widgetron with npm? ${PAYLOADS.join(" ")} & <b>"quotes"</b>`;
    const res = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: { message } });
    expect(res.status).toBe(200);
    expectSafe(res.body.data.reply);
    const history = (await h.call(`/chatbots/demo/conversations/${id}`)).body.data;
    expect(history.messages[0]).toMatchObject({ role: "user", content: message });
  });

  it("operator messages are Markdown rendered and sanitised like AI replies", async () => {
    const id = await openConversation(h);
    const res = await h.call(`/conversations/${id}/messages`, { json: { message: `**Hello** from support. ${PAYLOADS.join(" ")}` } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ id: expect.any(Number), role: "assistant", sources: [], created_at: expect.any(String) });
    expect(res.body.data.content).toContain("<strong>Hello</strong>");
    expectSafe(res.body.data.content);
    const visitor = await h.call(`/conversations/${id}/messages`, { json: { message: "<b>relayed</b>", role: "user" } });
    expect(visitor.body.data).toMatchObject({ role: "user", content: "<b>relayed</b>" });
    const detail = (await h.call(`/conversations/${id}`)).body.data;
    expect(detail.message_count).toBe(2);
    expect(detail.messages.map((m: { id: number }) => m.id)).toEqual([res.body.data.id, visitor.body.data.id]);
  });
});

describe("branding", () => {
  it("is appended to replies and assistant history, never stored, and goes away with brand removal", async () => {
    await ingestDocs(h.service);
    const id = await openConversation(h);
    const sent = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: { message: "How do I install Widgetron with npm?" } });
    expect(sent.body.data.reply.match(new RegExp(BRANDING, "g"))).toHaveLength(1);
    expect(sent.body.data.reply).toMatch(new RegExp(`${BRANDING.source}$`));
    const stored = await sqlOf(h.service).all<{ content: string }>("SELECT content FROM messages");
    for (const row of stored) expect(row.content).not.toContain("svc-branding");

    await h.service.orgs.update(h.tenant.organization.id, { brand_removal: true });
    const plain = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: { message: "What does the Pro plan cost?" } });
    expect(plain.body.data.reply).not.toContain("svc-branding");
    const history = (await h.call(`/chatbots/demo/conversations/${id}`)).body.data;
    for (const m of history.messages) expect(m.content).not.toContain("svc-branding");
    const account = (await h.call(`/conversations/${id}`)).body.data;
    for (const m of account.messages) expect(m.content).not.toContain("svc-branding");

    await h.service.orgs.update(h.tenant.organization.id, { brand_removal: false });
    const again = (await h.call(`/chatbots/demo/conversations/${id}`)).body.data;
    expect(again.messages.filter((m: { role: string; content: string }) => m.role === "assistant" && BRANDING.test(m.content))).toHaveLength(2);
    expect(again.messages.filter((m: { role: string; content: string }) => m.role === "user" && m.content.includes("svc-branding"))).toHaveLength(0);
  });

  it("toPlainText strips tags and drops the branding element", async () => {
    await ingestDocs(h.service);
    const id = await openConversation(h);
    const sent = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: { message: "What does the Pro plan cost?" } });
    const text = toPlainText(sent.body.data.reply);
    expect(text).toContain("49 euros");
    expect(text).not.toMatch(/[<>]/);
    expect(text).not.toContain(h.service.config.branding.text);
  });
});
