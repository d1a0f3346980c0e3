import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "../support/harness.js";
import type { FakeChatMode } from "../fixtures/fake-http.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fixtures/fake-openai.js";
import { sqlOf } from "../support/sql.js";
import { ingestDocs, openConversation, rowCounts } from "./helpers.js";

let h: Harness;
let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI({ reply: "Fake **answer** about Widgetron." });
  h = await startHarness({ chatModel: "openai:fake", openaiBaseUrl: fake.baseUrl, modelTimeoutMs: 1_000 });
  await ingestDocs(h.service);
});
afterEach(async () => {
  await h.close();
  await fake.close();
});

const QUESTION = { message: "How do I install Widgetron with npm?" };

describe("model failures", () => {
  it("a working provider answers through the same pipeline, with its model name", async () => {
    const id = await openConversation(h);
    const res = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: QUESTION });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ reply: expect.stringContaining("Fake <strong>answer</strong> about Widgetron."), model: "openai:fake", cannot_answer: false });
    expect(fake.calls).toBe(1);
  });

  const failures: [FakeChatMode, string][] = [
    ["fail", "the provider answers 500"],
    ["hang", "the provider does not answer within modelTimeoutMs"],
    ["empty", "the provider answers empty text"],
    ["malformed", "the provider answers something that is not JSON"],
  ];
  for (const [mode, what] of failures) {
    it(`500 with the conversation id, nothing stored, nothing charged, when ${what}`, async () => {
      fake.behave({ chat: mode });
      const id = await openConversation(h);
      const before = (await rowCounts(h.service));
      const started = Date.now();
      const res = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: QUESTION });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ success: false, message: "The model provider failed; retry once", conversation_id: id });
      expect((await rowCounts(h.service))).toEqual(before);
      if (mode === "hang") expect(Date.now() - started).toBeLessThan(3_000);
      // Retrying once the provider recovers works.
      fake.behave({ chat: "ok" });
      expect((await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: QUESTION })).status).toBe(200);
    });
  }

  it("a database failure during retrieval is the service's own 500, not blamed on the model, and stores and charges nothing", async () => {
    const id = await openConversation(h);
    const before = await rowCounts(h.service);
    const sql = sqlOf(h.service);
    await sql.exec("ALTER TABLE chunks RENAME TO chunks_away");
    try {
      const res = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: QUESTION });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ success: false, message: "Internal server error" });
    } finally {
      await sql.exec("ALTER TABLE chunks_away RENAME TO chunks");
    }
    expect(await rowCounts(h.service)).toEqual(before);
    expect(fake.calls).toBe(0);
  });

  it("the model answer is sanitised: script, handlers, javascript: links and images never come through", async () => {
    fake.behave({ reply: 'Hi <script>alert(1)</script><img src="https://t.example/pixel.gif" onerror="alert(2)"> [x](javascript:alert(3)) <a href="https://ok.example" onclick="alert(4)">ok</a>' });
    const id = await openConversation(h);
    const res = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: QUESTION });
    const reply: string = res.body.data.reply.replace(/<div class="svc-branding">[\s\S]*<\/div>$/, "");
    expect(reply).not.toMatch(/<script|<img|javascript:|\son\w+=/i);
    expect(reply).toContain('<a href="https://ok.example" target="_blank" rel="noopener noreferrer">ok</a>');
  });

  it("a model answer that is nothing once sanitised is a failure, not an empty reply", async () => {
    fake.behave({ reply: "<script>alert(1)</script>" });
    const id = await openConversation(h);
    const before = (await rowCounts(h.service));
    const res = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: QUESTION });
    expect(res.status).toBe(500);
    expect((await rowCounts(h.service))).toEqual(before);
  });

  it("the fallback does not call the model", async () => {
    fake.behave({ chat: "fail" });
    const id = await openConversation(h);
    const res = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: { message: "zzyzx qqqq" } });
    expect(res.status).toBe(200);
    expect(res.body.data.cannot_answer).toBe(true);
    expect(fake.calls).toBe(0);
  });
});
