import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DomainEvent } from "../../src/core/events.js";
import { startHarness, type Harness } from "../support/harness.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fixtures/fake-openai.js";
import { BRANDING, ingestDocs, openConversation, rowCounts } from "./helpers.js";
import { parseSseText } from "../support/sse.js";

let h: Harness;
let fake: FakeOpenAI;
let events: DomainEvent[];
beforeEach(async () => {
  fake = await startFakeOpenAI();
  h = await startHarness({ openaiBaseUrl: fake.baseUrl, modelTimeoutMs: 2_000 });
  await ingestDocs(h.service);
  events = [];
  h.service.on("*", (e) => void events.push(e as DomainEvent));
});
afterEach(async () => {
  await h.close();
  await fake.close();
});

const QUESTION = { message: "How do I install Widgetron with npm?" };


const stream = (path: string, body: unknown, init: RequestInit = {}) =>
  fetch(`${h.api}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${h.tenant.key.key}`, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(body),
    ...init,
  });

describe("send-message as Server-Sent Events", () => {
  it("streams deltas, then one done event with the JSON call's envelope; stores and charges once", async () => {
    const id = await openConversation(h);
    const res = await stream(`/chatbots/demo/conversations/${id}/messages`, QUESTION);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const frames = parseSseText(await res.text());
    const deltas = frames.filter((f) => f.event === "delta");
    expect(deltas.length).toBeGreaterThan(1);
    for (const d of deltas) expect(Object.keys(d.data)).toEqual(["text"]);
    expect(frames.filter((f) => f.event === "done")).toHaveLength(1);
    expect(frames.at(-1)!.event).toBe("done");
    const done = frames.at(-1)!.data;
    expect(done.success).toBe(true);
    expect(done.data).toMatchObject({ conversation_id: id, cannot_answer: false, model: "extractive", message_id: expect.any(Number) });
    expect(done.data.reply).toContain("npm install widgetron");
    expect(done.data.reply).toMatch(BRANDING);
    expect(done.data.sources.map((s: { name: string }) => s.name)).toContain("install.md");
    expect(done.meta).toEqual({ credits_used: 1, credits_max: 10_000, credits_remaining: 9_999, this_message: 1 });
    expect(deltas.map((d) => d.data.text).join("")).toContain("npm install widgetron");

    const history = (await h.call(`/chatbots/demo/conversations/${id}`)).body.data;
    expect(history.messages).toHaveLength(2);
    expect(history.messages[1].content).toBe(done.data.reply);
    expect(events.filter((e) => e.name === "message_received")).toHaveLength(1);
    expect((await rowCounts(h.service)).credits_used).toBe(1);
  });

  it("refusals before the model is called keep their HTTP status", async () => {
    const id = await openConversation(h);
    const invalid = await stream(`/chatbots/demo/conversations/${id}/messages`, { message: "" });
    expect(invalid.status).toBe(422);
    expect((await invalid.json()).errors).toHaveProperty("message");
    expect((await stream(`/chatbots/demo/conversations/999999/messages`, QUESTION)).status).toBe(404);
    await h.service.credits.setMonthly(h.tenant.organization.id, 0);
    expect((await stream(`/chatbots/demo/conversations/${id}/messages`, QUESTION)).status).toBe(429);
  });

  it("a provider failure mid-stream is one error event with the conversation id; nothing stored or charged", async () => {
    await h.service.chatbots.update("demo", { model: "openai:fake" });
    fake.behave({ chat: "fail" });
    const id = await openConversation(h);
    const before = (await rowCounts(h.service));
    const res = await stream(`/chatbots/demo/conversations/${id}/messages`, QUESTION);
    const frames = parseSseText(await res.text());
    expect(frames).toEqual([{ event: "error", data: { success: false, message: "The model provider failed; retry once", conversation_id: id } }]);
    expect((await rowCounts(h.service))).toEqual(before);
  });

  it("a client that disconnects aborts the model call; nothing is stored or charged", async () => {
    await h.service.chatbots.update("demo", { model: "openai:fake" });
    fake.behave({ deltaDelayMs: 100, reply: "one two three four five six seven eight nine ten eleven twelve" });
    const id = await openConversation(h);
    const before = (await rowCounts(h.service));
    const client = new AbortController();
    const res = await stream(`/chatbots/demo/conversations/${id}/messages`, QUESTION, { signal: client.signal });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain("event: delta");
    client.abort();
    await expect.poll(() => fake.aborted, { timeout: 3_000 }).toBe(1);
    // Had the answer gone on, it would have finished by now.
    await new Promise((r) => setTimeout(r, 1_400));
    expect((await rowCounts(h.service))).toEqual(before);
    expect(events.filter((e) => e.name === "message_received")).toHaveLength(0);
  });
});
