import { afterEach, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../src/index.js";
import { startHarness, type Harness } from "../support/harness.js";
import { eventually, startReceiver, type Receiver } from "./support/receiver.js";

let h: Harness;
let r: Receiver;
afterEach(async () => {
  await h?.close();
  await r?.close();
});

const timestamp = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

describe("webhooks from the chat API", () => {
  it("the typical chat flow over HTTP sends the four events, with their payload shapes, signed", async () => {
    h = await startHarness({ webhooks: { allowPrivateNetworks: true, retryDelaysMs: [50, 50, 50] } });
    r = await startReceiver();
    const hook = await h.call("/webhooks", {
      json: { url: `${r.url}/hook`, events: ["conversation_started", "message_received", "lead_captured", "conversation_ended"] },
    });
    const secret: string = hook.body.data.secret;

    const started = await h.call("/chatbots/demo/conversations", {
      json: { visitor_id: "v-1", visitor_name: "Ada", visitor_email: "ada@example.com" },
      headers: { "cf-ipcountry": "GB", referer: "https://shop.example.com/pricing" },
    });
    expect(started.status).toBe(201);
    const conversationId: number = started.body.data.conversation_id;
    const sessionId: string = started.body.data.session_id;
    const sent = await h.call(`/chatbots/demo/conversations/${conversationId}/messages`, { json: { message: "What is chatsvc?" } });
    expect(sent.status).toBe(200);
    expect(sent.body.data.actions).toEqual([{ type: "webhook", event: "message_received", deliveries: 1 }]);
    const lead = await h.call(`/chatbots/demo/conversations/${conversationId}/leads`, { json: { name: "Ada", email: "ada@example.com", phone: "+44 20 7946 0000", message: "Call me" } });
    expect(lead.status).toBe(201);
    expect((await h.call(`/chatbots/demo/conversations/${conversationId}/end`, { method: "POST" })).status).toBe(200);

    const got = await r.waitFor(4);
    for (const g of got) expect(verifyWebhook(secret, g.headers, g.body)).toBe(true);
    const byEvent = Object.fromEntries(got.map((g) => [g.json.event, g.json.data]));
    expect(Object.keys(byEvent).sort()).toEqual(["conversation_ended", "conversation_started", "lead_captured", "message_received"]);

    const agent = { id: expect.any(Number), name: expect.any(String), slug: "demo" };
    const conversation = {
      id: conversationId,
      session_id: sessionId,
      status: "active",
      source: "api",
      source_url: "https://shop.example.com/pricing",
      agent,
      visitor: { name: "Ada", email: "ada@example.com", ip: "127.0.0.1", country: "GB" },
      started_at: timestamp,
      created_at: timestamp,
    };
    expect(byEvent.conversation_started).toEqual(conversation);
    expect(byEvent.message_received).toEqual({
      id: expect.any(Number),
      conversation_id: conversationId,
      session_id: sessionId,
      role: "user",
      content: "What is chatsvc?",
      agent,
      created_at: timestamp,
    });
    expect(byEvent.lead_captured).toEqual({
      id: lead.body.data.lead_id,
      name: "Ada",
      email: "ada@example.com",
      phone: "+44 20 7946 0000",
      company: null,
      message: "Call me",
      source: "api",
      source_url: expect.toBeOneOf([null, expect.any(String)]),
      agent,
      conversation_id: conversationId,
      session_id: sessionId,
      created_at: timestamp,
    });
    expect(byEvent.conversation_ended).toEqual({
      ...conversation,
      status: "ended",
      ended_at: timestamp,
      duration_seconds: expect.any(Number),
      message_count: 2,
    });
    await eventually(async () => await (await h.service.webhooks.list())[0]!.total_triggers === 4);
    expect((await h.call("/webhooks")).body.data[0]).toMatchObject({ total_triggers: 4, failed_triggers: 0 });
  });

  it("a receiver that hangs does not slow down or fail the request that caused the event", async () => {
    h = await startHarness({ webhooks: { allowPrivateNetworks: true, retryDelaysMs: [50, 50, 50] } });
    r = await startReceiver(() => ({ hang: true }));
    await h.call("/webhooks", { json: { url: `${r.url}/hook`, events: ["conversation_started"] } });
    const before = Date.now();
    const started = await h.call("/chatbots/demo/conversations", { json: {} });
    expect(started.status).toBe(201);
    // Far below the 10 s delivery timeout the request would have waited for.
    expect(Date.now() - before).toBeLessThan(3_000);
    await r.waitFor(1);
  });
});
