import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEngine } from "../support/database.js";
import { verifyWebhook } from "../../src/index.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fixtures/fake-openai.js";
import { runCli } from "../support/cli.js";
import { addTenant, startHarness, type Harness } from "../support/harness.js";
import { parseSseText } from "../support/sse.js";
import { startReceiver, type Receiver } from "../webhooks/support/receiver.js";
import { widgetCall, openWidgetConversation } from "../widget/support.js";
import { BRANDING, ingestDocs, openConversation, rowCounts } from "./helpers.js";

/*
 * Human handoff: a person takes a conversation over (operator) or is asked for
 * (visitor); while a person has it the bot stays silent. The model is a fake
 * OpenAI-compatible server, so "no model call" is counted at the protocol level.
 */

let h: Harness;
let fake: FakeOpenAI;
let hooks: Receiver;
let secret: string;
let other: Awaited<ReturnType<typeof addTenant>>;

const QUESTION = { message: "How do I install Widgetron with npm?" };
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

beforeAll(async () => {
  fake = await startFakeOpenAI();
  h = await startHarness({ chatModel: "openai:fake", openaiBaseUrl: fake.baseUrl, webhooks: { allowPrivateNetworks: true, retryDelaysMs: [50] } });
  await ingestDocs(h.service);
  hooks = await startReceiver();
  secret = (await h.call("/webhooks", { json: { url: `${hooks.url}/hook`, events: ["handoff_requested"] } })).body.data.secret;
  other = await addTenant(h.service);
});
afterAll(async () => {
  await h?.close();
  await fake?.close();
  await hooks?.close();
});

const send = (id: number, body: unknown = QUESTION) => h.call(`/chatbots/demo/conversations/${id}/messages`, { json: body });
const used = async () => (await rowCounts(h.service)).credits_used;

describe("an operator takes a conversation over", () => {
  it("the bot goes silent (no model call, no charge, message_received still fires), the person's reply shows unbranded, release gives it back", async () => {
    const id = await openConversation(h);
    expect((await send(id)).body.data.reply).toMatch(BRANDING);
    const [callsBefore, creditsBefore] = [fake.calls, await used()];
    expect(callsBefore).toBe(1);

    const handed = await h.call(`/conversations/${id}/handoff`, { json: { reason: "Asked about a refund" } });
    expect(handed.status).toBe(200);
    expect(handed.body.data).toMatchObject({ id, status: "human", is_ended: false, handed_off_at: ISO, handoff_reason: "Asked about a refund" });
    const again = await h.call(`/conversations/${id}/handoff`, { method: "POST" });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ status: "human", handed_off_at: handed.body.data.handed_off_at });

    const quiet = await send(id, { message: "Hello? I want my money back." });
    expect(quiet.status).toBe(200);
    expect(quiet.body.data).toEqual({
      reply: null,
      handled_by: "human",
      conversation_id: id,
      user_message_id: expect.any(Number),
      actions: [{ type: "webhook", event: "message_received", deliveries: 0 }],
    });
    expect(quiet.body.meta).toMatchObject({ credits_used: creditsBefore, this_message: 0 });

    const streamed = await fetch(`${h.api}/chatbots/demo/conversations/${id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.tenant.key.key}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ message: "Still nobody?" }),
    });
    const frames = parseSseText(await streamed.text());
    expect(frames.map((f) => f.event)).toEqual(["done"]);
    expect(frames[0]!.data.data).toMatchObject({ reply: null, handled_by: "human", conversation_id: id });
    expect([fake.calls, await used()]).toEqual([callsBefore, creditsBefore]);

    const person = await h.call(`/conversations/${id}/messages`, { json: { message: "Hi, I'm **Ana** <img src=x onerror=alert(1)>", role: "agent", agent_name: "Ana" } });
    expect(person.status).toBe(201);
    expect(person.body.data).toMatchObject({ role: "agent", agent_name: "Ana", sources: [] });
    expect(person.body.data.content).toContain("<strong>Ana</strong>");
    expect(person.body.data.content).not.toMatch(/onerror|svc-branding/);

    const history = (await h.call(`/chatbots/demo/conversations/${id}`)).body.data;
    expect(history.status).toBe("human");
    expect(history.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user", "user", "agent"]);
    expect(history.messages[4]).toEqual(person.body.data);
    expect(history.messages[1]).not.toHaveProperty("agent_name");

    const listed = async (status: string) => (await h.call(`/conversations?status=${status}`)).body.data.map((c: { id: number }) => c.id);
    expect(await listed("human")).toContain(id);
    expect(await listed("active")).not.toContain(id);
    const latestReply = history.messages[1].id;
    expect((await h.call(`/chatbots/demo/conversations/${id}/messages/${latestReply}/regenerate`, { method: "POST" })).status).toBe(400);

    const released = await h.call(`/conversations/${id}/release`, { method: "POST" });
    expect(released.body.data).toMatchObject({ status: "active", handed_off_at: handed.body.data.handed_off_at, handoff_reason: "Asked about a refund" });
    expect((await h.call(`/conversations/${id}/release`, { method: "POST" })).body.data.status).toBe("active");
    expect(await listed("active")).toContain(id);

    expect((await send(id)).body.data.reply).toMatch(BRANDING);
    expect(fake.calls).toBe(callsBefore + 1);
    // The person's reply is part of the conversation the model sees, as the service's side.
    const prompt = fake.requests.filter((r) => r.path.endsWith("/chat/completions")).at(-1)!.body.messages as { role: string; content: string }[];
    expect(prompt.some((m) => m.role === "assistant" && m.content.includes("Hi, I'm Ana"))).toBe(true);
    // Two model replies, each rendering through jsdom: slow on a busy machine, not a timing assertion.
  }, 60_000);

  it("refuses another organisation's conversation (403), unknown ones (404), bad input (422) and ended ones (400), writing nothing", async () => {
    const mine = await openConversation(h);
    const theirs = (await h.service.conversations.start(other.organization.id, other.chatbot.slug, {})).conversation_id;
    for (const action of ["handoff", "release"]) {
      expect((await h.call(`/conversations/${theirs}/${action}`, { method: "POST" })).status).toBe(403);
      expect((await h.call(`/conversations/${mine}/${action}`, { method: "POST", key: other.key.key })).status).toBe(403);
      expect((await h.call(`/conversations/999999/${action}`, { method: "POST" })).status).toBe(404);
      expect((await h.call(`/conversations/abc/${action}`, { method: "POST" })).status).toBe(404);
    }
    expect((await h.service.conversations.get(other.organization.id, theirs)).status).toBe("active");

    const tooLong = await h.call(`/conversations/${mine}/handoff`, { json: { reason: "x".repeat(1001) } });
    expect(tooLong.status).toBe(422);
    expect(Object.keys(tooLong.body.errors)).toEqual(["reason"]);
    expect((await h.call(`/conversations/${mine}/handoff`, { json: { reason: 42 } })).status).toBe(422);
    expect((await h.call(`/conversations/${mine}/handoff`, { json: ["reason"] })).status).toBe(422);
    const agentNameAlone = await h.call(`/conversations/${mine}/messages`, { json: { message: "Hi", agent_name: "Ana" } });
    expect(agentNameAlone.status).toBe(422);
    expect(Object.keys(agentNameAlone.body.errors)).toEqual(["agent_name"]);
    expect((await h.call(`/conversations/${mine}/messages`, { json: { message: "Hi", role: "agent", agent_name: "x".repeat(101) } })).status).toBe(422);
    expect((await h.call(`/conversations/${mine}/messages`, { json: { message: "Hi", role: "operator" } })).status).toBe(422);
    expect((await h.call(`/conversations?status=people`)).status).toBe(422);
    expect((await h.service.conversations.get(h.tenant.organization.id, mine))).toMatchObject({ status: "active", handed_off_at: null, message_count: 0 });

    await h.call(`/conversations/${mine}/end`, { method: "POST" });
    for (const path of [`/conversations/${mine}/handoff`, `/conversations/${mine}/release`, `/chatbots/demo/conversations/${mine}/handoff`]) {
      const res = await h.call(path, { method: "POST" });
      expect([path, res.status, res.body.message]).toEqual([path, 400, "Conversation has already ended"]);
    }
  });
});

describe("a visitor asks for a person", () => {
  it("over the chatbot API: the conversation goes to people and handoff_requested is delivered signed, once", async () => {
    const id = await openConversation(h, { visitor_id: "v-7", visitor_name: "Ada" });
    const asked = await h.call(`/chatbots/demo/conversations/${id}/handoff`, { json: { reason: "I'd rather talk to someone" } });
    expect(asked.status).toBe(200);
    expect(asked.body.data).toEqual({ conversation_id: id, status: "human", handed_off_at: ISO, actions: [{ type: "webhook", event: "handoff_requested", deliveries: 1 }] });
    const [delivery] = await hooks.waitFor(1);
    expect(verifyWebhook(secret, delivery!.headers, delivery!.body)).toBe(true);
    expect(delivery!.json).toEqual({
      event: "handoff_requested",
      data: expect.objectContaining({
        id,
        status: "human",
        visitor_id: "v-7",
        visitor: expect.objectContaining({ name: "Ada" }),
        agent: { id: expect.any(Number), name: expect.any(String), slug: "demo" },
        reason: "I'd rather talk to someone",
        handed_off_at: asked.body.data.handed_off_at,
        requested_at: asked.body.data.handed_off_at,
      }),
    });

    const repeat = await h.call(`/chatbots/demo/conversations/${id}/handoff`, { method: "POST" });
    expect(repeat.body.data).toMatchObject({ status: "human", handed_off_at: asked.body.data.handed_off_at, actions: [] });
    const calls = fake.calls;
    expect((await send(id)).body.data.handled_by).toBe("human");
    expect(fake.calls).toBe(calls);
    expect((await h.call(`/conversations/${id}`)).body.data).toMatchObject({ status: "human", handed_off_at: asked.body.data.handed_off_at });
  });

  it("over the chatbot API: 403 for another organisation's slug, 404 for another chatbot's or an unknown conversation, 422 for a bad reason", async () => {
    const id = await openConversation(h);
    const theirs = (await h.service.conversations.start(other.organization.id, other.chatbot.slug, {})).conversation_id;
    expect((await h.call(`/chatbots/${other.chatbot.slug}/conversations/${theirs}/handoff`, { method: "POST" })).status).toBe(403);
    expect((await h.call(`/chatbots/demo/conversations/${id}/handoff`, { method: "POST", key: other.key.key })).status).toBe(403);
    expect((await h.call(`/chatbots/demo/conversations/${theirs}/handoff`, { method: "POST" })).status).toBe(404);
    expect((await h.call(`/chatbots/demo/conversations/999999/handoff`, { method: "POST" })).status).toBe(404);
    expect((await h.call(`/chatbots/demo/conversations/${id}/handoff`, { json: { reason: ["?"] } })).status).toBe(422);
    expect((await h.call(`/conversations/${id}`)).body.data.status).toBe("active");
  });

  it("through the widget: only when the chatbot offers it; then messages are stored without a reply and spend no widget budget", async () => {
    const { id, token } = await openWidgetConversation(h);
    expect((await widgetCall(h, "/widget/demo/config")).body.data.handoff_enabled).toBe(false);
    const refused = await widgetCall(h, `/widget/demo/conversations/${id}/handoff`, { token, json: {} });
    expect(refused.status).toBe(403);
    expect((await h.call(`/conversations/${id}`)).body.data.status).toBe("active");

    await h.service.chatbots.update("demo", { handoff_enabled: true });
    await h.service.widgetBudgets.set(await h.service.chatbots.get("demo"), { visitor_per_day: 1 });
    try {
      expect((await h.call("/chatbots/demo")).body.data.handoff_enabled).toBe(true);
      expect((await widgetCall(h, "/widget/demo/config")).body.data.handoff_enabled).toBe(true);
      expect((await widgetCall(h, `/widget/demo/conversations/${id}/handoff`, { json: {} })).status).toBe(401);
      const asked = await widgetCall(h, `/widget/demo/conversations/${id}/handoff`, { token, json: { reason: "Please" } });
      expect(asked.status).toBe(200);
      expect(asked.body.data).toEqual({ conversation_id: id, status: "human", handed_off_at: ISO });

      const calls = fake.calls;
      for (const message of ["First", "Second", "Third"]) {
        const res = await widgetCall(h, `/widget/demo/conversations/${id}/messages`, { token, json: { message } });
        expect(res.status).toBe(200);
        expect(res.body.data).toEqual({ reply: null, handled_by: "human", conversation_id: id, user_message_id: expect.any(Number) });
      }
      expect(fake.calls).toBe(calls);

      const history = (await widgetCall(h, `/widget/demo/conversations/${id}`, { token })).body.data;
      expect(history.status).toBe("human");
      const last = history.messages.at(-1).id as number;
      await h.call(`/conversations/${id}/messages`, { json: { message: "Ana here, how can I help?", role: "agent", agent_name: "Ana" } });
      const newer = (await widgetCall(h, `/widget/demo/conversations/${id}?after=${last}`, { token })).body.data;
      expect(newer.messages).toEqual([expect.objectContaining({ role: "agent", agent_name: "Ana", content: "<p>Ana here, how can I help?</p>" })]);

      // Back with the bot, the visitor's budget of one message a day applies again.
      await h.call(`/conversations/${id}/release`, { method: "POST" });
      expect((await widgetCall(h, `/widget/demo/conversations/${id}/messages`, { token, json: QUESTION })).status).toBe(200);
      expect((await widgetCall(h, `/widget/demo/conversations/${id}/messages`, { token, json: QUESTION })).status).toBe(429);
    } finally {
      await h.service.widgetBudgets.set(await h.service.chatbots.get("demo"), { visitor_per_day: null });
      await h.service.chatbots.update("demo", { handoff_enabled: false });
    }
  });
});

describe("chatsvc conversations and bots update --handoff-enabled", () => {
  // Real CLI processes on the harness's database: a spawn can take seconds on a loaded machine.
  // The CLI prints what the service calls tested above on both engines return: it runs here on SQLite, and against
  // PostgreSQL (`--database-url`) in test/scale, so each command does not start a process per engine.
  it.skipIf(testEngine === "postgres")("hands a conversation to a person, answers as one, gives it back; offers visitors a person", { timeout: 60_000 }, async () => {
    const cli = (...args: string[]) => runCli([...h.database.cliArgs, ...args]);
    const id = String(await openConversation(h));
    const handed = await cli("conversations", "handoff", id, "--reason", "VIP customer", "--json");
    expect(handed.code, handed.stderr).toBe(0);
    expect(handed.json()).toMatchObject({ id: Number(id), status: "human", handoff_reason: "VIP customer", handed_off_at: ISO });
    const reply = await cli("conversations", "reply", id, "Hello, **Ana** here.", "--as-agent", "Ana", "--json");
    expect(reply.code, reply.stderr).toBe(0);
    expect(reply.json()).toMatchObject({ role: "agent", agent_name: "Ana", content: "<p>Hello, <strong>Ana</strong> here.</p>" });
    const released = await cli("conversations", "release", id);
    expect(released.code, released.stderr).toBe(0);
    expect(released.stdout).toMatch(/status\s+active\n/);
    const unknown = await cli("conversations", "handoff", "999999");
    expect([unknown.code, unknown.stderr.trim()]).toEqual([1, "error: Conversation not found"]);

    const enabled = await cli("bots", "update", "demo", "--handoff-enabled", "--json");
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(enabled.json().handoff_enabled).toBe(true);
    await h.service.chatbots.update("demo", { handoff_enabled: false });
  });
});
