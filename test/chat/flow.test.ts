import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DomainEvent } from "../../src/core/events.js";
import { startHarness, type Harness } from "../support/harness.js";
import { BRANDING, ingestDocs } from "./helpers.js";

let h: Harness;
let events: DomainEvent[];
beforeEach(async () => {
  h = await startHarness();
  await ingestDocs(h.service);
  events = [];
  h.service.on("*", (e) => void events.push(e as DomainEvent));
});
afterEach(async () => {
  await h.close();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("the spec's typical chat flow", () => {
  it("config, conversation, messages, rating, lead, history, end", async () => {
    // 1. configuration
    const config = await h.call("/chatbots/demo");
    expect(config.status).toBe(200);
    expect(config.body.data.has_knowledge_base).toBe(true);

    // 2. conversation
    const opened = await h.call("/chatbots/demo/conversations", {
      json: { visitor_id: "visitor-1", visitor_name: "Ana", visitor_email: "ana@example.com", visitor_phone: "+351 1", metadata: { plan: "pro", n: 2 } },
      headers: { referer: "https://shop.example.com/pricing", "cf-ipcountry": "pt" },
    });
    expect(opened.status).toBe(201);
    expect(opened.body.success).toBe(true);
    const conv = opened.body.data;
    expect(Object.keys(conv).sort()).toEqual(["conversation_id", "is_ended", "session_id", "started_at", "visitor_id"]);
    expect(conv).toEqual({ conversation_id: expect.any(Number), session_id: expect.stringMatching(/^api_[A-Za-z0-9_-]{20,}$/), visitor_id: "visitor-1", started_at: expect.stringMatching(ISO), is_ended: false });
    const started = events.find((e) => e.name === "conversation_started")!;
    expect(started.organizationId).toBe(h.tenant.organization.id);
    expect(started.data).toEqual({
      id: conv.conversation_id,
      session_id: conv.session_id,
      status: "active",
      source: "api",
      source_url: "https://shop.example.com/pricing",
      agent: { id: h.tenant.chatbot.id, name: h.tenant.chatbot.name, slug: "demo" },
      visitor: { name: "Ana", email: "ana@example.com", ip: "127.0.0.1", country: "PT" },
      started_at: conv.started_at,
      created_at: conv.started_at,
    });
    const base = `/chatbots/demo/conversations/${conv.conversation_id}`;

    // 3. messages
    const sent = await h.call(`${base}/messages`, { json: { message: "How do I install Widgetron with npm?" } });
    expect(sent.status).toBe(200);
    const reply = sent.body.data;
    expect(Object.keys(reply).sort()).toEqual(["actions", "cannot_answer", "conversation_id", "message_id", "model", "reply", "response_ms", "sources"]);
    expect(reply.conversation_id).toBe(conv.conversation_id);
    expect(reply.message_id).toEqual(expect.any(Number));
    expect(reply.cannot_answer).toBe(false);
    expect(reply.reply).toContain("npm install widgetron");
    expect(reply.reply).toMatch(/^<p>/);
    expect(reply.reply).toMatch(BRANDING);
    expect(reply.sources).toContainEqual({ name: "install.md", type: expect.any(String), score: expect.any(Number) });
    for (const s of reply.sources) expect(s.score).toBeGreaterThan(0);
    expect(reply.actions).toEqual([{ type: "webhook", event: "message_received", deliveries: 0 }]);
    expect(reply.model).toBe("extractive");
    expect(Number.isInteger(reply.response_ms) && reply.response_ms >= 0).toBe(true);
    expect(sent.body.meta).toEqual({ credits_used: 1, credits_max: 10_000, credits_remaining: 9_999, this_message: 1 });
    const received = events.find((e) => e.name === "message_received")!;
    expect(received.data).toEqual({
      id: expect.any(Number),
      conversation_id: conv.conversation_id,
      session_id: conv.session_id,
      role: "user",
      content: "How do I install Widgetron with npm?",
      agent: { id: h.tenant.chatbot.id, name: h.tenant.chatbot.name, slug: "demo" },
      created_at: expect.stringMatching(ISO),
    });

    const second = await h.call(`${base}/messages`, { json: { message: "What does the Pro plan cost?" } });
    expect(second.status).toBe(200);
    expect(second.body.data.reply).toContain("49 euros");
    expect(second.body.data.sources.map((s: { name: string }) => s.name)).toContain("billing.md");
    expect(second.body.meta.credits_used).toBe(2);

    // 4. rating, twice: the second updates
    const rate = await h.call(`${base}/messages/rate`, { json: { message_id: reply.message_id, rating: "good" } });
    expect(rate.status).toBe(200);
    expect(rate.body).toEqual({ success: true, data: { message_id: reply.message_id, rating: "good" } });
    const again = await h.call(`${base}/messages/rate`, { json: { message_id: reply.message_id, rating: "bad" } });
    expect(again.body.data).toEqual({ message_id: reply.message_id, rating: "bad" });

    // 5. lead
    const lead = await h.call(`${base}/leads`, { json: { name: "Ana Silva", email: "ana@example.com", phone: "+351 912", message: "Call me" } });
    expect(lead.status).toBe(201);
    expect(lead.body.data).toEqual({ lead_id: expect.any(Number), conversation_id: conv.conversation_id, name: "Ana Silva", email: "ana@example.com", phone: "+351 912" });
    const captured = events.find((e) => e.name === "lead_captured")!;
    expect(captured.data).toEqual({
      id: lead.body.data.lead_id,
      name: "Ana Silva",
      email: "ana@example.com",
      phone: "+351 912",
      company: null,
      message: "Call me",
      source: "api",
      source_url: "https://shop.example.com/pricing",
      agent: { id: h.tenant.chatbot.id, name: h.tenant.chatbot.name, slug: "demo" },
      conversation_id: conv.conversation_id,
      session_id: conv.session_id,
      created_at: expect.stringMatching(ISO),
    });
    const leads = await h.call("/leads");
    expect(leads.body.data.map((l: { id: number }) => l.id)).toEqual([lead.body.data.lead_id]);

    // history
    const history = await h.call(base);
    expect(history.status).toBe(200);
    const hist = history.body.data;
    expect(Object.keys(hist).sort()).toEqual(
      ["ended_at", "id", "is_ended", "last_message_at", "message_count", "messages", "source", "started_at", "status", "visitor_email", "visitor_id", "visitor_name"].sort(),
    );
    expect(hist).toMatchObject({ id: conv.conversation_id, visitor_id: "visitor-1", visitor_name: "Ana", visitor_email: "ana@example.com", is_ended: false, source: "api", started_at: conv.started_at, ended_at: null, message_count: 4 });
    expect(hist.last_message_at >= conv.started_at).toBe(true);
    expect(hist.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    for (const m of hist.messages) expect(Object.keys(m).sort()).toEqual(["content", "created_at", "id", "role", "sources"]);
    expect(hist.messages[0]).toEqual({ id: expect.any(Number), role: "user", content: "How do I install Widgetron with npm?", sources: [], created_at: expect.stringMatching(ISO) });
    expect(hist.messages[1]).toEqual({ id: reply.message_id, role: "assistant", content: reply.reply, sources: reply.sources, created_at: expect.stringMatching(ISO) });

    // 6. end, idempotent
    const end = await h.call(`${base}/end`, { method: "POST" });
    expect(end.status).toBe(200);
    expect(end.body.data).toEqual({ message: expect.any(String), conversation_id: conv.conversation_id, ended_at: expect.stringMatching(ISO), duration_seconds: expect.any(Number), message_count: 4 });
    expect(end.body.data.duration_seconds).toBeGreaterThanOrEqual(0);
    const endAgain = await h.call(`${base}/end`, { method: "POST" });
    expect(endAgain.status).toBe(200);
    expect(endAgain.body.data).toEqual(end.body.data);
    const endedEvents = events.filter((e) => e.name === "conversation_ended");
    expect(endedEvents).toHaveLength(1);
    expect(endedEvents[0]!.data).toMatchObject({ id: conv.conversation_id, status: "ended", ended_at: end.body.data.ended_at, duration_seconds: end.body.data.duration_seconds, message_count: 4 });
    const closed = await h.call(base);
    expect(closed.body.data).toMatchObject({ is_ended: true, ended_at: end.body.data.ended_at });
  });

  it("answers with the fallback when the knowledge base has nothing relevant, charged like any answer", async () => {
    await h.service.chatbots.update("demo", { fallback_message: "I can only talk about Widgetron." });
    const opened = await h.call("/chatbots/demo/conversations", { json: {} });
    const res = await h.call(`/chatbots/demo/conversations/${opened.body.data.conversation_id}/messages`, { json: { message: "zzyzx qqqq" } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ cannot_answer: true, sources: [], reply: expect.stringContaining("I can only talk about Widgetron.") });
    expect(res.body.meta.this_message).toBe(1);
    expect(res.body.meta.credits_used).toBe(1);
  });

  it("visitor id is null when absent and the body may be empty", async () => {
    const res = await h.call("/chatbots/demo/conversations", { method: "POST" });
    expect(res.status).toBe(201);
    expect(res.body.data.visitor_id).toBeNull();
  });

  it("regenerating replaces the reply; the old one leaves history and the new one can be rated", async () => {
    const opened = await h.call("/chatbots/demo/conversations", { json: {} });
    const base = `/chatbots/demo/conversations/${opened.body.data.conversation_id}`;
    const first = await h.call(`${base}/messages`, { json: { message: "How do I install Widgetron with npm?" } });
    const regen = await h.call(`${base}/messages/${first.body.data.message_id}/regenerate`, { method: "POST" });
    expect(regen.status).toBe(200);
    expect(regen.body.data.message_id).not.toBe(first.body.data.message_id);
    expect(regen.body.data.reply).toContain("npm install widgetron");
    expect(regen.body.meta.credits_used).toBe(2);
    const hist = (await h.call(base)).body.data;
    expect(hist.messages.map((m: { id: number }) => m.id)).toEqual([hist.messages[0].id, regen.body.data.message_id]);
    expect(hist.message_count).toBe(2);
    // The replaced reply is gone for rating and regenerating too.
    expect((await h.call(`${base}/messages/rate`, { json: { message_id: first.body.data.message_id, rating: "good" } })).status).toBe(404);
    expect((await h.call(`${base}/messages/${first.body.data.message_id}/regenerate`, { method: "POST" })).status).toBe(404);
    expect((await h.call(`${base}/messages/rate`, { json: { message_id: regen.body.data.message_id, rating: "good" } })).status).toBe(200);
  });

  it("the same operations work on the service object without HTTP", async () => {
    const org = h.tenant.organization.id;
    const conv = await h.service.conversations.start(org, "demo", { visitor_id: "lib" });
    const { data, meta } = await h.service.chat.send(org, "demo", conv.conversation_id, { message: "Which file does the installer create?" });
    expect(data.reply).toContain("widgetron.config.json");
    expect(meta.credits_remaining).toBe(9_999);
    expect((await h.service.conversations.history(org, "demo", conv.conversation_id)).message_count).toBe(2);
    expect((await h.service.credits.status(org)).credits_used).toBe(1);
  });
});
