import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ChatServiceOptions } from "../../src/core/config.js";
import { MODEL_FAILED_MESSAGE } from "../../src/models/errors.js";
import { parseSse, type SseEvent } from "../../src/net/sse.js";
import { BRANDING, ingestDocs, openConversation, rowCounts } from "../chat/helpers.js";
import type { FakeServer } from "../fixtures/fake-http.js";
import { startFakeOllama } from "../fixtures/fake-ollama.js";
import { startFakeOpenAI } from "../fixtures/fake-openai.js";
import { startHarness, type Harness } from "../support/harness.js";

interface ProviderCase {
  name: string;
  spec: string;
  chatPath: string;
  start(): Promise<FakeServer>;
  /** Service options selecting this provider as the default model, the way an operator would (environment). */
  options(fake: FakeServer): ChatServiceOptions;
}

const providers: ProviderCase[] = [
  {
    name: "ollama",
    spec: "ollama:llama3.2",
    chatPath: "/api/chat",
    start: () => startFakeOllama(),
    options: (fake) => ({ env: { CHATSVC_CHAT_MODEL: "ollama:llama3.2", OLLAMA_HOST: fake.url } }),
  },
  {
    name: "openai",
    spec: "openai:gpt-4o-mini",
    chatPath: "/v1/chat/completions",
    start: () => startFakeOpenAI({ apiKey: "sk-test" }),
    options: (fake) => ({ env: { CHATSVC_CHAT_MODEL: "openai:gpt-4o-mini", OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-test" } }),
  },
];

/** A send-message over SSE: the events, read until the server ends the stream. */
async function sendStreaming(h: Harness, conversationId: number, message: string): Promise<{ status: number; contentType: string; events: SseEvent[] }> {
  const res = await fetch(`${h.api}/chatbots/demo/conversations/${conversationId}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${h.tenant.key.key}`, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ message }),
  });
  const events: SseEvent[] = [];
  for await (const event of parseSse(res.body!)) events.push(event);
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", events };
}

const chatRequests = (fake: FakeServer, path: string) => fake.requests.filter((r) => r.path === path);
const promptText = (body: { messages: { content: string }[] }) => body.messages.map((m) => m.content).join("\n");

describe.each(providers)("send-message through $name", (provider) => {
  let fake: FakeServer;
  let h: Harness;
  let conversationId: number;
  let start: (options?: ChatServiceOptions) => Promise<void>;

  beforeEach(async () => {
    fake = await provider.start();
    start = async (extra = {}) => {
      const base = provider.options(fake);
      h = await startHarness({ ...base, ...extra, env: { ...base.env, ...extra.env } });
      await ingestDocs(h.service);
      conversationId = await openConversation(h);
    };
  });
  afterEach(async () => {
    await h?.close();
    await fake.close();
  });

  const send = (message: string) => h.call(`/chatbots/demo/conversations/${conversationId}/messages`, { json: { message } });

  it("the model receives the retrieved knowledge, its source and the conversation so far", async () => {
    await start();
    fake.behave({ reply: "The Pro plan costs 49 euros per month." });
    expect((await send("What does the Pro plan cost?")).status).toBe(200);
    fake.behave({ reply: "Invoices are emailed on the first day of each month." });
    const second = await send("And when are invoices sent?");
    expect(second.status).toBe(200);

    const sent = chatRequests(fake, provider.chatPath);
    expect(sent).toHaveLength(2);
    const [system, ...turns] = sent[1]!.body.messages as { role: string; content: string }[];
    expect(system!.role).toBe("system");
    expect(system!.content).toContain("Invoices are emailed on the first day of each month.");
    expect(system!.content).toContain('source="billing.md"');
    expect(turns.map((t) => t.role)).toEqual(["user", "assistant", "user"]);
    expect(turns[0]!.content).toContain("What does the Pro plan cost?");
    expect(turns[1]!.content).toContain("The Pro plan costs 49 euros per month.");
    expect(turns[2]!.content).toContain("And when are invoices sent?");
    expect(second.body.data.model).toBe(provider.spec);
  });

  it("renders the model's Markdown and strips scripts and javascript: links from it", async () => {
    await start();
    fake.behave({
      reply: 'The **Pro plan** costs 49 euros.\n\n<script>alert("x")</script>\n\n[Pay here](javascript:alert(1)) or <a href="javascript:alert(2)">here</a> <img src=x onerror="alert(3)">',
    });
    const res = await send("What does the Pro plan cost?");
    expect(res.status).toBe(200);
    const reply: string = res.body.data.reply;
    expect(reply).toContain("<strong>Pro plan</strong>");
    expect(reply).toMatch(BRANDING);
    expect(reply).not.toMatch(/<script|javascript:|onerror|alert\(/i);
    const history = await h.call(`/chatbots/demo/conversations/${conversationId}`);
    expect(history.body.data.messages[1].content).not.toMatch(/<script|javascript:|onerror/i);
  });

  it("streams several delta events, then one done event carrying the normal envelope", async () => {
    await start();
    fake.behave({ reply: "The Pro plan costs 49 euros per month and includes priority support." });
    const { status, contentType, events } = await sendStreaming(h, conversationId, "What does the Pro plan cost?");
    expect(status).toBe(200);
    expect(contentType).toMatch(/^text\/event-stream/);
    const deltas = events.filter((e) => e.event === "delta");
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.map((e) => JSON.parse(e.data).text).join("")).toBe("The Pro plan costs 49 euros per month and includes priority support.");
    expect(events.slice(deltas.length).map((e) => e.event)).toEqual(["done"]);
    const done = JSON.parse(events.at(-1)!.data);
    expect(done).toMatchObject({ success: true, data: { conversation_id: conversationId, model: provider.spec, cannot_answer: false }, meta: { this_message: 1 } });
    expect(done.data.reply).toContain("49 euros");
    expect(chatRequests(fake, provider.chatPath)[0]!.body.stream).toBe(true);
    expect((await rowCounts(h.service)).messages).toBe(2);
  });

  it("a failing provider gives the 500 envelope with the conversation id and stores and charges nothing", async () => {
    await start();
    const before = (await rowCounts(h.service));
    fake.behave({ chat: "fail" });
    const res = await send("What does the Pro plan cost?");
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ success: false, message: MODEL_FAILED_MESSAGE, conversation_id: conversationId });
    const streamed = await sendStreaming(h, conversationId, "What does the Pro plan cost?");
    expect(streamed.events.map((e) => e.event)).toEqual(["error"]);
    expect(JSON.parse(streamed.events[0]!.data)).toEqual({ success: false, message: MODEL_FAILED_MESSAGE, conversation_id: conversationId });
    expect((await rowCounts(h.service))).toEqual(before);
  });

  it("a malformed answer gives the 500 envelope and leaves no rows", async () => {
    await start();
    const before = (await rowCounts(h.service));
    fake.behave({ chat: "malformed" });
    const res = await send("What does the Pro plan cost?");
    expect(res.status).toBe(500);
    expect(res.body.message).toBe(MODEL_FAILED_MESSAGE);
    expect((await rowCounts(h.service))).toEqual(before);
  });

  it("a hanging provider times out (modelTimeoutMs) into the 500 envelope and leaves no rows", async () => {
    await start({ modelTimeoutMs: 1_000 });
    // The deadline covers retrieval too: a first search on a busy machine could use it
    // all before the model is asked, and then there would be no upstream request to cut.
    expect((await send("What does the Pro plan cost?")).status).toBe(200);
    const before = (await rowCounts(h.service));
    fake.behave({ chat: "hang" });
    const started = Date.now();
    const res = await send("What does the Pro plan cost?");
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ success: false, message: MODEL_FAILED_MESSAGE, conversation_id: conversationId });
    expect(Date.now() - started).toBeLessThan(3_000);
    await fake.waitForAbort(provider.chatPath);
    expect((await rowCounts(h.service))).toEqual(before);
  });

  it("a client that disconnects mid-stream aborts the upstream request; nothing is stored or charged", async () => {
    await start();
    const before = (await rowCounts(h.service));
    fake.behave({ deltaDelayMs: 40, reply: "The Pro plan costs 49 euros per month and includes priority support." });
    const client = new AbortController();
    const res = await fetch(`${h.api}/chatbots/demo/conversations/${conversationId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.tenant.key.key}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ message: "What does the Pro plan cost?" }),
      signal: client.signal,
    });
    const reader = parseSse(res.body!)[Symbol.asyncIterator]();
    expect((await reader.next()).value?.event).toBe("delta");
    client.abort();
    await reader.next().catch(() => undefined);
    await fake.waitForAbort(provider.chatPath);
    // Let the server settle the aborted request before counting.
    await h.call("/auth/test");
    expect((await rowCounts(h.service))).toEqual(before);
  });

  it("meta.this_message and the credits charged follow the per-model cost table", async () => {
    await start({ creditCosts: { [provider.spec]: 3 } });
    const res = await send("What does the Pro plan cost?");
    expect(res.status).toBe(200);
    expect(res.body.meta).toMatchObject({ credits_used: 3, this_message: 3 });
  });
});

describe("model selection per chatbot", () => {
  it("a chatbot's own model wins over the service default", async () => {
    const fake = await startFakeOllama({ reply: "Answered by the bot's own model." });
    const h = await startHarness({ ollamaHost: fake.url });
    try {
      await ingestDocs(h.service);
      const conversationId = await openConversation(h);
      const ask = () => h.call(`/chatbots/demo/conversations/${conversationId}/messages`, { json: { message: "What does the Pro plan cost?" } });
      expect((await ask()).body.data.model).toBe("extractive");
      expect(fake.requests).toHaveLength(0);
      await h.service.chatbots.update("demo", { model: "ollama:llama3.2:1b" });
      const res = await ask();
      expect(res.body.data).toMatchObject({ model: "ollama:llama3.2:1b" });
      expect(res.body.data.reply).toContain("Answered by the bot");
      expect(fake.requests[0]!.body.model).toBe("llama3.2:1b");
      expect(promptText(fake.requests[0]!.body)).toContain("49 euros");
    } finally {
      await h.close();
      await fake.close();
    }
  });
});
