import { afterEach, describe, expect, it } from "vitest";
import { ingestDocs, openConversation } from "../chat/helpers.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fixtures/fake-openai.js";
import { addTenant, request, startHarness, type Harness } from "../support/harness.js";
import { parseSseText } from "../support/sse.js";
import { sqliteOf } from "../support/sqlite.js";

let h: Harness | undefined;
let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await h?.close();
  await fake?.close();
  h = fake = undefined;
});

const QUESTION = "How do I create an API key?";
const keyed = (key: string, headers: Record<string, string> = {}) => ({ headers: { "idempotency-key": key, ...headers } });
const creditsUsed = async (h: Harness) => (await h.service.credits.status(h.tenant.organization.id)).credits_used;

describe("Idempotency-Key", () => {
  it("answers a retried send from the stored answer, charging and storing once", async () => {
    h = await startHarness();
    const id = await openConversation(h);
    const path = `/chatbots/demo/conversations/${id}/messages`;
    const first = await h.call(path, { json: { message: QUESTION }, ...keyed("send-1") });
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotency-replayed")).toBeNull();
    const retry = await h.call(path, { json: { message: QUESTION }, ...keyed("send-1") });
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotency-replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);
    expect(await creditsUsed(h)).toBe(1);
    expect((await h.call(`/chatbots/demo/conversations/${id}`)).body.data.message_count).toBe(2);
    // Without a key, or with a new one, the same body is a new message.
    expect((await h.call(path, { json: { message: QUESTION } })).headers.get("idempotency-replayed")).toBeNull();
    expect((await h.call(path, { json: { message: QUESTION }, ...keyed("send-2") })).headers.get("idempotency-replayed")).toBeNull();
    expect(await creditsUsed(h)).toBe(3);
  });

  it("replays every creating route with its status: conversations, regenerate, leads, account messages, webhooks", async () => {
    h = await startHarness();
    const opened = await h.call("/chatbots/demo/conversations", { json: { visitor_id: "v1" }, ...keyed("open") });
    const again = await h.call("/chatbots/demo/conversations", { json: { visitor_id: "v1" }, ...keyed("open") });
    expect([opened.status, again.status]).toEqual([201, 201]);
    expect(again.body).toEqual(opened.body);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect((await h.call("/conversations")).body.meta.total).toBe(1);
    const id = opened.body.data.conversation_id;

    const sent = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: { message: QUESTION } });
    const regenerate = `/chatbots/demo/conversations/${id}/messages/${sent.body.data.message_id}/regenerate`;
    const regenerated = await h.call(regenerate, { method: "POST", ...keyed("regen") });
    expect(regenerated.status).toBe(200);
    const regeneratedAgain = await h.call(regenerate, { method: "POST", ...keyed("regen") });
    expect(regeneratedAgain.body).toEqual(regenerated.body);
    expect(await creditsUsed(h)).toBe(2);

    const lead = { name: "Ana", email: "ana@example.com" };
    const leads = await Promise.all([0, 1].map(async () => h!.call(`/chatbots/demo/conversations/${id}/leads`, { json: lead, ...keyed("lead") })));
    // Concurrent duplicates: the second either waits for nothing (409) or comes after the first finished (replay).
    expect(leads.map((l) => l.status).sort()).toEqual(expect.arrayContaining([201]));
    for (const l of leads) expect([201, 409]).toContain(l.status);
    expect((await h.call("/leads")).body.meta.total).toBe(1);

    const operator = await h.call(`/conversations/${id}/messages`, { json: { message: "A human here" }, ...keyed("op") });
    const operatorAgain = await h.call(`/conversations/${id}/messages`, { json: { message: "A human here" }, ...keyed("op") });
    expect([operator.status, operatorAgain.status]).toEqual([201, 201]);
    expect(operatorAgain.body).toEqual(operator.body);

    const hook = await h.call("/webhooks", { json: { url: "http://example.com/h", events: ["lead_captured"] }, ...keyed("hook") });
    const hookAgain = await h.call("/webhooks", { json: { url: "http://example.com/h", events: ["lead_captured"] }, ...keyed("hook") });
    expect(hook.status).toBe(201);
    // The replay is the creation answer, secret included: the retrying client never saw it.
    expect(hookAgain.status).toBe(201);
    expect(hookAgain.body.data.secret).toBe(hook.body.data.secret);
  });

  it("refuses a key reused for another body or another endpoint with 422, and keeps organisations apart", async () => {
    h = await startHarness();
    const id = await openConversation(h);
    const path = `/chatbots/demo/conversations/${id}/messages`;
    expect((await h.call(path, { json: { message: QUESTION }, ...keyed("k") })).status).toBe(200);
    const otherBody = await h.call(path, { json: { message: "Something else" }, ...keyed("k") });
    expect(otherBody.status).toBe(422);
    expect(otherBody.body.errors).toHaveProperty("Idempotency-Key");
    expect((await h.call(`/conversations/${id}/messages`, { json: { message: QUESTION }, ...keyed("k") })).status).toBe(422);
    expect(await creditsUsed(h)).toBe(1);
    const malformed = await h.call(path, { json: { message: QUESTION }, ...keyed("spaces are not allowed") });
    expect(malformed.status).toBe(400);

    const other = await addTenant(h.service);
    const theirs = await request(`${h.api}/chatbots/${other.chatbot.slug}/conversations`, { key: other.key.key, json: {}, ...keyed("k") });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotency-replayed")).toBeNull();
  });

  it("answers 409 while the first attempt runs, and lets a retry run again after it failed (nothing was charged)", async () => {
    fake = await startFakeOpenAI({ reply: "Create a key with chatsvc keys create." });
    h = await startHarness({ chatModel: "openai:fake", openaiBaseUrl: fake.baseUrl, modelTimeoutMs: 1500 });
    await ingestDocs(h.service);
    const id = await openConversation(h);
    const path = `/chatbots/demo/conversations/${id}/messages`;
    fake.behave({ chat: "hang" });
    const first = h.call(path, { json: { message: "How do I install Widgetron?" }, ...keyed("slow") });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const duplicate = await h.call(path, { json: { message: "How do I install Widgetron?" }, ...keyed("slow") });
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get("retry-after")).toBe("1");
    expect((await first).status).toBe(500);
    expect(await creditsUsed(h)).toBe(0);

    fake.behave({ chat: "ok" });
    const retry = await h.call(path, { json: { message: "How do I install Widgetron?" }, ...keyed("slow") });
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotency-replayed")).toBeNull();
    expect(await creditsUsed(h)).toBe(1);
  });

  it("stores a streamed send's done envelope and replays it as JSON", async () => {
    h = await startHarness();
    const id = await openConversation(h);
    const path = `/chatbots/demo/conversations/${id}/messages`;
    const streamed = await h.call(path, { json: { message: QUESTION }, ...keyed("sse", { accept: "text/event-stream" }) });
    const done = parseSseText(streamed.text).find((e) => e.event === "done")!;
    const replay = await h.call(path, { json: { message: QUESTION }, ...keyed("sse", { accept: "text/event-stream" }) });
    expect(replay.headers.get("content-type")).toMatch(/^application\/json/);
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    expect(replay.body).toEqual(done.data);
    expect(await creditsUsed(h)).toBe(1);
  });

  it("forgets a key after 24 hours: the key then runs again", async () => {
    h = await startHarness();
    const id = await openConversation(h);
    const path = `/chatbots/demo/conversations/${id}/messages`;
    await h.call(path, { json: { message: QUESTION }, ...keyed("old") });
    const sqlite = sqliteOf(h.service);
    sqlite.prepare("UPDATE idempotency_keys SET created_at = ?").run(new Date(Date.now() - 24 * 3_600_000 - 1000).toISOString());
    const again = await h.call(path, { json: { message: QUESTION }, ...keyed("old") });
    expect(again.headers.get("idempotency-replayed")).toBeNull();
    expect(await creditsUsed(h)).toBe(2);
  });
});
