import { afterEach, describe, expect, it } from "vitest";
import type { ChatServiceOptions } from "../../src/core/config.js";
import type { DomainEvent } from "../../src/core/events.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fixtures/fake-openai.js";
import { startHarness, type Harness } from "../support/harness.js";
import { startReceiver } from "../webhooks/support/receiver.js";
import { openWidgetConversation } from "../widget/support.js";
import { ingestDocs, openConversation, rowCounts } from "./helpers.js";

/*
 * A client that goes away before its answer is complete gets nothing stored
 * and nothing charged, and no message_received fires (README, Security notes).
 * Each test abandons one request, then sends a follow-up on the same
 * conversation and waits for its answer: the follow-up is served after the
 * abandoned one has run its course, so the history must hold the follow-up only.
 */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const CHAT_PATH = "/v1/chat/completions";
const QUESTION = "How do I install Widgetron with npm?";
const FOLLOW_UP = "Which Node version does Widgetron need?";
const SLOW_REPLY = "one two three four five six seven eight nine ten eleven twelve";
// Raw HTML: only the render worker renders it, so a cold worker holds the finished answer back from being stored.
const HTML_REPLY = "Install it with <kbd>npm install widgetron</kbd>.";

interface Setup {
  h: Harness;
  fake: FakeOpenAI;
  events: DomainEvent[];
}

async function setup(options: ChatServiceOptions = {}): Promise<Setup> {
  const fake = await startFakeOpenAI();
  cleanups.push(() => fake.close());
  const hooks = await startReceiver();
  cleanups.push(() => hooks.close());
  const h = await startHarness({ openaiBaseUrl: fake.baseUrl, modelTimeoutMs: 30_000, webhooks: { allowPrivateNetworks: true }, ...options });
  cleanups.push(() => h.close());
  await ingestDocs(h.service);
  await h.service.chatbots.update("demo", { model: "openai:fake" });
  expect((await h.call("/webhooks", { json: { url: `${hooks.url}/hook`, events: ["message_received"] } })).status).toBe(201);
  const events: DomainEvent[] = [];
  h.service.on("*", (e) => void events.push(e as DomainEvent));
  return { h, fake, events };
}

function send(h: Harness, id: number, message: string, { stream = false, signal }: { stream?: boolean; signal?: AbortSignal } = {}) {
  return fetch(`${h.api}/chatbots/demo/conversations/${id}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${h.tenant.key.key}`, "content-type": "application/json", ...(stream && { accept: "text/event-stream" }) },
    body: JSON.stringify({ message }),
    signal,
  });
}

/** A request that was cut off by its client: fetch rejects with the abort. */
async function abandoned(pending: Promise<Response>): Promise<void> {
  await expect(pending).rejects.toThrow(/abort/i);
}

/** Reads Server-Sent Events text until `until` holds for what has arrived so far. */
async function readUntil(res: Response, until: (text: string) => boolean): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!until(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before the expected point: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  return text;
}

const deltaText = (sse: string) =>
  [...sse.matchAll(/^event: delta\ndata: (.*)$/gm)].map((m) => (JSON.parse(m[1]!) as { text: string }).text).join("");

/** The follow-up is answered and stored alone: one exchange, one credit, one event, one webhook delivery. */
async function expectOnlyFollowUp({ h, events }: Setup, id: number): Promise<void> {
  const res = await send(h, id, FOLLOW_UP);
  expect(res.status).toBe(200);
  const history = (await h.call(`/chatbots/demo/conversations/${id}`)).body.data;
  expect(history.messages.map((m: { role: string; content: string }) => [m.role, m.role === "user" ? m.content : "reply"])).toEqual([
    ["user", FOLLOW_UP],
    ["assistant", "reply"],
  ]);
  const counts = (await rowCounts(h.service));
  expect(counts.credits_used).toBe(1);
  expect(counts.webhook_deliveries).toBe(1);
  const received = events.filter((e) => e.name === "message_received");
  expect(received.map((e) => (e.data as { content: string }).content)).toEqual([FOLLOW_UP]);
}

describe("a streamed reply whose client goes away", () => {
  it("mid-stream: the model call is cancelled; nothing is stored or charged and no webhook fires", async () => {
    const s = await setup();
    s.fake.behave({ deltaDelayMs: 100, reply: SLOW_REPLY });
    const id = await openConversation(s.h);
    const client = new AbortController();
    const res = await send(s.h, id, QUESTION, { stream: true, signal: client.signal });
    await readUntil(res, (text) => text.includes("event: delta"));
    client.abort();
    await s.fake.waitForAbort(CHAT_PATH, 3_000);
    expect(s.fake.requests.find((r) => r.path === CHAT_PATH)!.answered).toBe(false);
    s.fake.behave({ deltaDelayMs: 0 });
    await expectOnlyFollowUp(s, id);
  });

  it("after the model finished but before the reply was stored: nothing is stored or charged", async () => {
    // A cold render worker takes a while to load jsdom: the model's answer (raw
    // HTML, see HTML_REPLY) is complete and waits for rendering when the client leaves.
    const s = await setup({ renderWorker: true });
    s.fake.behave({ reply: HTML_REPLY });
    const id = await openConversation(s.h);
    const client = new AbortController();
    const res = await send(s.h, id, QUESTION, { stream: true, signal: client.signal });
    // Every delta of the answer arrived, and the model server finished its answer...
    await readUntil(res, (text) => deltaText(text) === HTML_REPLY);
    await s.fake.waitFor(() => s.fake.requests.some((r) => r.path === CHAT_PATH && r.answered));
    // ...and chatsvc read it before this round trip came back, but has not stored it (no done event).
    expect((await fetch(`${s.h.server.url}/healthz`)).status).toBe(200);
    client.abort();
    expect(s.fake.requests.find((r) => r.path === CHAT_PATH)).toMatchObject({ answered: true, aborted: false });
    await expectOnlyFollowUp(s, id);
  });

  it("through the widget: nothing is stored or charged", async () => {
    const s = await setup();
    s.fake.behave({ deltaDelayMs: 100, reply: SLOW_REPLY });
    const { id, token } = await openWidgetConversation(s.h);
    const client = new AbortController();
    const res = await fetch(`${s.h.server.url}/widget/demo/conversations/${id}/messages`, {
      method: "POST",
      headers: { origin: s.h.server.url, "x-widget-token": token, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ message: QUESTION }),
      signal: client.signal,
    });
    await readUntil(res, (text) => text.includes("event: delta"));
    client.abort();
    await s.fake.waitForAbort(CHAT_PATH, 3_000);
    s.fake.behave({ deltaDelayMs: 0 });
    await expectOnlyFollowUp(s, id);
  });
});

describe("a JSON send whose client goes away before the answer", () => {
  it("cancels the model call; nothing is stored or charged", async () => {
    const s = await setup();
    s.fake.behave({ chat: "hang" });
    const id = await openConversation(s.h);
    const client = new AbortController();
    const pending = send(s.h, id, QUESTION, { signal: client.signal });
    await s.fake.waitFor(() => s.fake.calls === 1);
    client.abort();
    await abandoned(pending);
    // Without the cancellation the model call would go on until the 30 s model timeout.
    await s.fake.waitForAbort(CHAT_PATH, 3_000);
    s.fake.behave({ chat: "ok" });
    await expectOnlyFollowUp(s, id);
  });

  it("after the model finished but before the reply was stored: nothing is stored or charged", async () => {
    const s = await setup({ renderWorker: true });
    s.fake.behave({ reply: HTML_REPLY });
    const id = await openConversation(s.h);
    const client = new AbortController();
    const pending = send(s.h, id, QUESTION, { signal: client.signal });
    await s.fake.waitFor(() => s.fake.requests.some((r) => r.path === CHAT_PATH && r.answered));
    expect((await fetch(`${s.h.server.url}/healthz`)).status).toBe(200);
    client.abort();
    await abandoned(pending);
    expect(s.fake.requests.find((r) => r.path === CHAT_PATH)).toMatchObject({ answered: true, aborted: false });
    await expectOnlyFollowUp(s, id);
  });
});
