import { afterEach, describe, expect, it } from "vitest";
import { ingestDocs, openConversation } from "../chat/helpers.js";
import { startFakeOpenAI } from "../fixtures/fake-openai.js";
import { executableParts, OWASP_PAYLOADS } from "../fixtures/xss.js";
import { sharedHarness, startHarness, type Harness } from "../support/harness.js";

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/*
 * The requests of one test, a few at a time: each is checked on its own, and one after another
 * they mostly waited on the database. Messages on one conversation at once are what a busy widget sends.
 */
async function eachAtOnce<T>(items: T[], check: (item: T, index: number) => Promise<void>, clients = 4): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < items.length) {
        const index = next++;
        await check(items[index]!, index);
      }
    }),
  );
}

/** Every assistant message of the conversation's history must be inert; user messages come back as the text sent. */
async function expectInertHistory(h: Harness, conversationId: number, sentByVisitor: string[] = []) {
  const history = await h.call(`/chatbots/demo/conversations/${conversationId}`);
  expect(history.status).toBe(200);
  const assistant = history.body.data.messages.filter((m: { role: string }) => m.role === "assistant");
  expect(assistant.length).toBeGreaterThan(0);
  for (const message of assistant) expect(executableParts(message.content), message.content).toEqual([]);
  const fromVisitor = history.body.data.messages.filter((m: { role: string }) => m.role === "user").map((m: { content: string }) => m.content);
  for (const text of sentByVisitor) expect(fromVisitor).toContain(text);
}

describe("XSS corpus", () => {
  // One service for the tests on the default options: each reads only its own conversation, and whatever the others stored must stay inert too.
  const shared = sharedHarness({ rateLimit: false });

  it("the checker itself flags every raw payload that is executable HTML", () => {
    const flagged = OWASP_PAYLOADS.filter((p) => executableParts(p).length > 0);
    // Markdown-only and plain-text payloads are not HTML yet; every HTML one is caught.
    expect(flagged.length).toBeGreaterThan(60);
    expect(executableParts('<p><a href="https://example.com" target="_blank" rel="noopener noreferrer">ok</a></p>')).toEqual([]);
  });

  it("through visitor messages: replies and history stay inert, the visitor's text is kept verbatim as text", async () => {
    const h = shared();
    await ingestDocs(h.service);
    const conversation = await openConversation(h);
    await eachAtOnce(OWASP_PAYLOADS, async (payload) => {
      const res = await h.call(`/chatbots/demo/conversations/${conversation}/messages`, { json: { message: `Widgetron install ${payload}` } });
      expect(res.status, payload).toBe(200);
      expect(executableParts(res.body.data.reply), `${payload} -> ${res.body.data.reply}`).toEqual([]);
    });
    await expectInertHistory(h, conversation, OWASP_PAYLOADS.slice(0, 5).map((p) => `Widgetron install ${p}`));
  }, 30_000);

  it("through knowledge documents quoted by the extractive model", async () => {
    const h = shared();
    await ingestDocs(
      h.service,
      "demo",
      OWASP_PAYLOADS.map((payload, i) => ({ name: `tip-${i}.md`, content: `Zorblax tip number ${i}\n\nThe zorblax tip ${i} says ${payload} and that is all.\n` })),
    );
    const conversation = await openConversation(h);
    let answered = 0;
    const asked = OWASP_PAYLOADS.map((_, i) => i).filter((i) => i % 3 === 0);
    await eachAtOnce(asked, async (i) => {
      const res = await h.call(`/chatbots/demo/conversations/${conversation}/messages`, { json: { message: `What does zorblax tip ${i} say?` } });
      expect(res.status).toBe(200);
      if (!res.body.data.cannot_answer) answered++;
      expect(executableParts(res.body.data.reply), res.body.data.reply).toEqual([]);
    });
    // The documents were really quoted, so the payloads went through the renderer.
    expect(answered).toBeGreaterThan(20);
    await expectInertHistory(h, conversation);
  }, 30_000);

  it("through model output (an OpenAI-compatible server answering with the payloads), streaming included", async () => {
    const fake = await startFakeOpenAI({
      reply: (req) => {
        const asked = /payload (\d+)( alone)?/.exec(JSON.stringify(req.body.messages.at(-1)));
        const payload = OWASP_PAYLOADS[Number(asked?.[1] ?? 0)]!;
        return asked?.[2] ? payload : `Here is what I found: ${payload} Hope that helps.`;
      },
    });
    cleanups.push(() => fake.close());
    const h = await startHarness({ rateLimit: false, chatModel: "openai:fake", openaiBaseUrl: fake.baseUrl });
    cleanups.push(() => h.close());
    await ingestDocs(h.service);
    const conversation = await openConversation(h);
    await eachAtOnce(OWASP_PAYLOADS, async (payload, i) => {
      const res = await h.call(`/chatbots/demo/conversations/${conversation}/messages`, { json: { message: `How do I install Widgetron? payload ${i}` } });
      expect(res.status, payload).toBe(200);
      expect(res.body.data.cannot_answer).toBe(false);
      expect(executableParts(res.body.data.reply), `${payload} -> ${res.body.data.reply}`).toEqual([]);
    });
    // An answer that is nothing but script is empty once sanitised: a model failure, and nothing is stored.
    const scriptOnly = await h.call(`/chatbots/demo/conversations/${conversation}/messages`, { json: { message: "How do I install Widgetron? payload 0 alone" } });
    expect(scriptOnly.status).toBe(500);
    expect(scriptOnly.text).not.toMatch(/<script/i);
    const streamed = await h.call(`/chatbots/demo/conversations/${conversation}/messages`, {
      json: { message: "How do I install Widgetron? payload 2" },
      headers: { accept: "text/event-stream" },
    });
    const done = /event: done\ndata: (.*)\n/.exec(streamed.text)?.[1];
    expect(done).toBeDefined();
    expect(executableParts(JSON.parse(done!).data.reply)).toEqual([]);
    await expectInertHistory(h, conversation);
  }, 30_000);

  it("through operator messages (Markdown rendered like replies)", async () => {
    const h = shared();
    const conversation = await openConversation(h);
    await eachAtOnce(OWASP_PAYLOADS, async (payload) => {
      const res = await h.call(`/conversations/${conversation}/messages`, { json: { message: `Note: ${payload}`, role: "assistant" } });
      expect(res.status, payload).toBe(201);
      expect(executableParts(res.body.data.content), `${payload} -> ${res.body.data.content}`).toEqual([]);
    });
    await expectInertHistory(h, conversation);
    const account = await h.call(`/conversations/${conversation}`);
    for (const message of account.body.data.messages) if (message.role === "assistant") expect(executableParts(message.content)).toEqual([]);
  }, 30_000);
});
