import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addTenant, startHarness, type Harness } from "../support/harness.js";
import { ingestDocs, openConversation, rowCounts } from "./helpers.js";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
  await ingestDocs(h.service);
});
afterEach(async () => {
  await h.close();
});

const QUESTION = { message: "How do I install Widgetron with npm?" };

describe("chatbot endpoints: 403 slug, 404 conversation", () => {
  it("403 for another organisation's slug and an unknown slug on every chatbot endpoint, writing nothing", async () => {
    const other = await addTenant(h.service);
    const theirConversation = (await h.service.conversations.start(other.organization.id, other.chatbot.slug, {})).conversation_id;
    const before = (await rowCounts(h.service));
    for (const slug of [other.chatbot.slug, "no-such-bot"]) {
      const base = `/chatbots/${slug}/conversations/${theirConversation}`;
      const calls: [string, RequestInit & { json?: unknown }][] = [
        [`/chatbots/${slug}/conversations`, { json: {} }],
        [`${base}/messages`, { json: QUESTION }],
        [`${base}/messages/rate`, { json: { message_id: 1, rating: "good" } }],
        [`${base}/messages/1/regenerate`, { method: "POST" }],
        [base, {}],
        [`${base}/end`, { method: "POST" }],
        [`${base}/leads`, { json: { email: "a@b.co" } }],
      ];
      for (const [path, init] of calls) {
        const res = await h.call(path, init);
        expect(res.status, path).toBe(403);
        expect(res.body.success).toBe(false);
      }
    }
    expect((await rowCounts(h.service))).toEqual(before);
  });

  it("404 for a conversation of another chatbot, an unknown id and a malformed id", async () => {
    await h.service.chatbots.create({ organization_id: h.tenant.organization.id, slug: "second", name: "Second" });
    const ofSecond = await openConversation(h, {}, "second");
    for (const id of [String(ofSecond), "999999", "abc"]) {
      const base = `/chatbots/demo/conversations/${id}`;
      for (const [path, init] of [
        [`${base}/messages`, { json: QUESTION }],
        [`${base}/messages/rate`, { json: { message_id: 1, rating: "good" } }],
        [base, {}],
        [`${base}/end`, { method: "POST" }],
        [`${base}/leads`, { json: { email: "a@b.co" } }],
      ] as [string, RequestInit & { json?: unknown }][]) {
        const res = await h.call(path, init);
        expect(res.status, `${path}`).toBe(404);
      }
    }
  });

  it("rating a message that is not an assistant message of the conversation is 404", async () => {
    const id = await openConversation(h);
    const other = await openConversation(h);
    const sent = await h.call(`/chatbots/demo/conversations/${other}/messages`, { json: QUESTION });
    const hist = (await h.call(`/chatbots/demo/conversations/${other}`)).body.data;
    const userMessageId = hist.messages[0].id;
    expect((await h.call(`/chatbots/demo/conversations/${id}/messages/rate`, { json: { message_id: sent.body.data.message_id, rating: "good" } })).status).toBe(404);
    expect((await h.call(`/chatbots/demo/conversations/${other}/messages/rate`, { json: { message_id: userMessageId, rating: "good" } })).status).toBe(404);
  });

  it("403 for an inactive chatbot: no new conversation, no message", async () => {
    const id = await openConversation(h);
    await h.service.chatbots.update("demo", { is_active: false });
    const before = (await rowCounts(h.service));
    expect((await h.call("/chatbots/demo/conversations", { json: {} })).status).toBe(403);
    const sent = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: QUESTION });
    expect(sent.status).toBe(403);
    expect((await rowCounts(h.service))).toEqual(before);
  });
});

describe("ended conversations", () => {
  it("400 when sending to an ended conversation, and nothing is stored or charged", async () => {
    const id = await openConversation(h);
    await h.call(`/chatbots/demo/conversations/${id}/end`, { method: "POST" });
    const before = (await rowCounts(h.service));
    const res = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: QUESTION });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, message: "Conversation has already ended" });
    expect((await rowCounts(h.service))).toEqual(before);
  });

  it("account-level end is 400 the second time; account-level messages to an ended conversation are 400", async () => {
    const id = await openConversation(h);
    const first = await h.call(`/conversations/${id}/end`, { method: "POST" });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ conversation_id: id, message_count: 0, duration_seconds: expect.any(Number) });
    const second = await h.call(`/conversations/${id}/end`, { method: "POST" });
    expect(second.status).toBe(400);
    expect(second.body.message).toBe("Conversation has already ended");
    expect((await h.call(`/conversations/${id}/messages`, { json: { message: "hello" } })).status).toBe(400);
  });
});

describe("account-level records: 403 another organisation's, 404 unknown", () => {
  it("conversations and leads", async () => {
    const other = await addTenant(h.service);
    const conv = (await h.service.conversations.start(other.organization.id, other.chatbot.slug, {})).conversation_id;
    const lead = (await h.service.leads.capture(other.organization.id, other.chatbot.slug, conv, { email: "x@y.co" })).lead_id;
    const before = (await rowCounts(h.service));
    const cases: [string, RequestInit & { json?: unknown }][] = [
      [`/conversations/${conv}`, {}],
      [`/conversations/${conv}/messages`, { json: { message: "hi" } }],
      [`/conversations/${conv}/end`, { method: "POST" }],
      [`/leads/${lead}`, {}],
      [`/leads/${lead}`, { method: "PUT", json: { name: "Mallory" } }],
    ];
    for (const [path, init] of cases) {
      expect((await h.call(path, init)).status, path).toBe(403);
      expect((await h.call(path.replace(/\/(\d+)/, "/987654"), init)).status, path).toBe(404);
    }
    expect((await rowCounts(h.service))).toEqual(before);
    expect((await h.service.conversations.get(other.organization.id, conv)).is_ended).toBe(false);
    expect((await h.service.leads.get(other.organization.id, lead)).name).toBeNull();
  });
});

describe("422 names each bad field", () => {
  it("send-message: missing, wrong type, empty, not an object", async () => {
    const id = await openConversation(h);
    const path = `/chatbots/demo/conversations/${id}/messages`;
    const before = (await rowCounts(h.service));
    for (const body of [{}, { message: 42 }, { message: null }, { message: "   " }, { message: ["hi"] }]) {
      const res = await h.call(path, { json: body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual(["message"]);
    }
    const notObject = await h.call(path, { json: ["hi"] });
    expect(notObject.status).toBe(422);
    expect(notObject.body.errors).toHaveProperty("body");
    expect((await rowCounts(h.service))).toEqual(before);
  });

  it("the 10,000 character boundary counts code points", async () => {
    const id = await openConversation(h);
    const path = `/chatbots/demo/conversations/${id}/messages`;
    const ok = await h.call(path, { json: { message: "a".repeat(10_000) } });
    expect(ok.status).toBe(200);
    const emoji = await h.call(path, { json: { message: "😀".repeat(10_000) } });
    expect(emoji.status).toBe(200);
    const before = (await rowCounts(h.service));
    const over = await h.call(path, { json: { message: "a".repeat(10_001) } });
    expect(over.status).toBe(422);
    expect(over.body.errors.message).toEqual(["The message field must not be greater than 10000 characters."]);
    expect((await rowCounts(h.service))).toEqual(before);
    const hist = (await h.call(`/chatbots/demo/conversations/${id}`)).body.data;
    expect(hist.messages[2].content).toBe("😀".repeat(10_000));
  });

  it("conversation create, rating, leads and lead updates", async () => {
    const badCreate = await h.call("/chatbots/demo/conversations", { json: { visitor_id: 7, visitor_email: "not-an-email", metadata: [1, 2], visitor_name: { a: 1 } } });
    expect(badCreate.status).toBe(422);
    expect(Object.keys(badCreate.body.errors).sort()).toEqual(["metadata", "visitor_email", "visitor_id", "visitor_name"]);

    const id = await openConversation(h);
    const badRate = await h.call(`/chatbots/demo/conversations/${id}/messages/rate`, { json: { message_id: "1", rating: "meh" } });
    expect(badRate.status).toBe(422);
    expect(Object.keys(badRate.body.errors).sort()).toEqual(["message_id", "rating"]);

    const noContact = await h.call(`/chatbots/demo/conversations/${id}/leads`, { json: { message: "call me", name: "  " } });
    expect(noContact.status).toBe(422);
    expect(Object.keys(noContact.body.errors).sort()).toEqual(["email", "name", "phone"]);
    const badEmail = await h.call(`/chatbots/demo/conversations/${id}/leads`, { json: { name: "Ana", email: "ana@", phone: 12 } });
    expect(badEmail.status).toBe(422);
    expect(Object.keys(badEmail.body.errors).sort()).toEqual(["email", "phone"]);

    const lead = await h.call(`/chatbots/demo/conversations/${id}/leads`, { json: { phone: "+1 555" } });
    expect(lead.status).toBe(201);
    const leadId = lead.body.data.lead_id;
    const badUpdate = await h.call(`/leads/${leadId}`, { method: "PUT", json: { email: "nope", company: false } });
    expect(badUpdate.status).toBe(422);
    expect(Object.keys(badUpdate.body.errors).sort()).toEqual(["company", "email"]);
    const emptyUpdate = await h.call(`/leads/${leadId}`, { method: "PUT", json: {} });
    expect(emptyUpdate.status).toBe(422);
    const updated = await h.call(`/leads/${leadId}`, { method: "PUT", json: { company: "Acme Corp", email: "buyer@acme.co" } });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ id: leadId, phone: "+1 555", company: "Acme Corp", email: "buyer@acme.co", updated_at: expect.any(String) });

    const badPost = await h.call(`/conversations/${id}/messages`, { json: { message: "", role: "system" } });
    expect(badPost.status).toBe(422);
    expect(Object.keys(badPost.body.errors).sort()).toEqual(["message", "role"]);
  });
});
