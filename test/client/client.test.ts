import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ChatsvcError, createClient, type ChatsvcClient } from "../../src/client/index.js";
import { apiRoutes } from "../../src/h3.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fixtures/fake-openai.js";
import { BRANDING, DOCS, ingestDocs, rowCounts } from "../chat/helpers.js";
import { startHarness, type Harness } from "../support/harness.js";

/** A fetch that records which route each request hit, to prove the client covers the API. */
function recordingFetch(routesHit: Set<string>, base: string): typeof fetch {
  const patterns = apiRoutes.map((r) => ({
    id: `${r.method} ${r.path}`,
    method: r.method,
    re: new RegExp(`^${r.path.replace(/\./g, "\\.").replace(/:\w+/g, "[^/]+")}$`),
  }));
  return async (input, init) => {
    const request = new Request(input, init);
    const path = new URL(request.url).pathname.slice(new URL(base).pathname.length);
    const match = patterns.find((p) => p.method === request.method && p.re.test(path));
    if (match) routesHit.add(match.id);
    return fetch(request);
  };
}

describe("the typed client against a real server", () => {
  let h: Harness;
  let client: ChatsvcClient;
  const routesHit = new Set<string>();

  beforeAll(async () => {
    h = await startHarness();
    await ingestDocs(h.service);
    client = createClient({ baseUrl: h.api, apiKey: h.tenant.key.key, fetch: recordingFetch(routesHit, h.api) });
  });
  afterAll(() => h.close());

  it("runs the spec's chat flow with typed answers", async () => {
    expect((await client.auth.test()).data).toEqual({ user_id: h.tenant.user.id, organization_id: h.tenant.organization.id, email: "owner@acme.test" });
    const bots = await client.chatbots.list();
    expect(bots.meta.total).toBe(1);
    const { data: bot } = await client.chatbots.get("demo");
    expect(bot.branding.required).toBe(true);

    const { data: started } = await client.chatbots.startConversation("demo", { visitor_id: "v-42" });
    expect(started).toMatchObject({ visitor_id: "v-42", is_ended: false });
    const { data: reply, meta } = await client.chatbots.send("demo", started.conversation_id, "How do I install Widgetron?");
    if (reply.reply === null) throw new Error("the bot did not answer");
    expect(reply.reply).toMatch(BRANDING);
    expect(reply.cannot_answer).toBe(false);
    expect(meta.this_message).toBe(1);
    expect((await client.chatbots.rate("demo", started.conversation_id, reply.message_id, "good")).data).toEqual({ message_id: reply.message_id, rating: "good" });
    const { data: again } = await client.chatbots.regenerate("demo", started.conversation_id, reply.message_id);
    const { data: history } = await client.chatbots.history("demo", started.conversation_id);
    expect(history.messages.map((m) => m.id)).toEqual([history.messages[0]!.id, again.message_id]);
    const { data: lead } = await client.chatbots.submitLead("demo", started.conversation_id, { email: "ana@example.com" });
    expect(lead.email).toBe("ana@example.com");
    expect((await client.chatbots.end("demo", started.conversation_id)).data.conversation_id).toBe(started.conversation_id);
  });

  it("covers the account-level endpoints, with query parameters and pagination", async () => {
    const a = (await client.chatbots.startConversation("demo")).data.conversation_id;
    await client.chatbots.startConversation("demo");
    const page = await client.conversations.list({ per_page: 1, status: "active", chatbot: "demo", since: undefined });
    expect(page.meta).toMatchObject({ per_page: 1, current_page: 1 });
    expect(page.links.next).toContain("page=2");
    expect(page.data).toHaveLength(1);
    const { data: posted } = await client.conversations.addMessage(a, { message: "A **human** answer" });
    expect(posted.content).toContain("<strong>human</strong>");
    expect((await client.conversations.get(a)).data.message_count).toBe(1);
    const { data: handed } = await client.conversations.handoff(a, { reason: "Refund" });
    expect(handed).toMatchObject({ status: "human", handoff_reason: "Refund", handed_off_at: expect.any(String) });
    expect((await client.chatbots.requestHandoff("demo", a)).data).toEqual({ conversation_id: a, status: "human", handed_off_at: handed.handed_off_at, actions: [] });
    const { data: person } = await client.conversations.addMessage(a, { message: "Ana here", role: "agent", agent_name: "Ana" });
    expect(person).toMatchObject({ role: "agent", agent_name: "Ana", content: "<p>Ana here</p>" });
    expect((await client.conversations.list({ status: "human" })).data.map((c) => c.id)).toEqual([a]);
    expect((await client.conversations.list({ rating: "unrated", q: "zzz-no-such-text" })).data).toEqual([]);
    expect((await client.conversations.release(a)).data).toMatchObject({ status: "active", handed_off_at: handed.handed_off_at });
    expect((await client.conversations.end(a)).data.conversation_id).toBe(a);

    const leads = await client.leads.list({ per_page: 5 });
    const id = leads.data[0]!.id;
    expect((await client.leads.update(id, { company: "Example Ltd" })).data.company).toBe("Example Ltd");
    expect((await client.leads.get(id)).data.conversation.messages.length).toBeGreaterThan(0);
    const today = new Date().toISOString().slice(0, 10);
    const week = await client.analytics.overview({ chatbot: "demo", since: today, interval: "week" });
    expect(week.data.buckets).toHaveLength(1);
    expect(week.data.totals.conversations).toBeGreaterThanOrEqual(2);
    expect((await client.analytics.unanswered({ chatbot: "demo", per_page: 5 })).meta.per_page).toBe(5);
    expect((await client.analytics.sources({ chatbot: "demo" })).data.length).toBeGreaterThan(0);
    await expect(client.analytics.overview({ interval: "month" as never })).rejects.toMatchObject({ status: 422, errors: { interval: expect.any(Array) } });
    expect((await client.samples.lead()).data.agent.slug).toBe("support");
    expect((await client.samples.conversation()).data.status).toBe("active");
    expect((await client.openapi()).openapi).toBe("3.1.0");
  });

  it("manages webhooks, showing the secret once", async () => {
    const service = await startHarness({ webhooks: { allowPrivateNetworks: true } });
    try {
      const hooks = createClient({ baseUrl: service.api, apiKey: service.tenant.key.key, fetch: recordingFetch(routesHit, service.api) });
      const { data: created } = await hooks.webhooks.register({ url: "http://127.0.0.1:9/hook", events: ["lead_captured"] });
      expect(created.secret).toMatch(/^whsec_/);
      const { data: updated } = await hooks.webhooks.register({ url: "http://127.0.0.1:9/hook", events: ["message_received"] });
      expect(updated.secret).toBeUndefined();
      expect((await hooks.webhooks.list()).data.map((w) => w.events)).toEqual([["message_received"]]);
      // Nothing listens on port 9: the test event's failure is the answer, not a thrown error.
      expect((await hooks.webhooks.test(created.id)).data).toMatchObject({ webhook_id: created.id, event: "webhook_test", delivered: false, status: null });
      expect((await hooks.webhooks.delete(created.id)).data).toEqual({ id: created.id });
    } finally {
      await service.close();
    }
  });

  it("sends an idempotency key per call: a retried send or stream answers the first success, charged once", async () => {
    const conversation = (await client.chatbots.startConversation("demo", {}, { idempotencyKey: "client-open" })).data.conversation_id;
    expect((await client.chatbots.startConversation("demo", {}, { idempotencyKey: "client-open" })).data.conversation_id).toBe(conversation);
    const used = async () => (await h.service.credits.status(h.tenant.organization.id)).credits_used;
    const before = await used();
    const first = await client.chatbots.send("demo", conversation, "How do I install it?", { idempotencyKey: "client-send" });
    const again = await client.chatbots.send("demo", conversation, "How do I install it?", { idempotencyKey: "client-send" });
    expect(again).toEqual(first);
    const streamed = [];
    for await (const event of client.chatbots.stream("demo", conversation, "And the API key?", { idempotencyKey: "client-stream" })) streamed.push(event);
    const replayed = [];
    for await (const event of client.chatbots.stream("demo", conversation, "And the API key?", { idempotencyKey: "client-stream" })) replayed.push(event);
    expect(replayed).toEqual([streamed.at(-1)]);
    expect(await used()).toBe(before + 2);
  });

  it("reads and sets a chatbot's widget budgets", async () => {
    expect((await client.chatbots.setWidgetBudget("demo", { chatbot_per_hour: 7 })).data.limits.chatbot_per_hour).toBe(7);
    expect((await client.chatbots.widgetBudget("demo")).data.overrides).toEqual({ visitor_per_day: null, chatbot_per_hour: 7, chatbot_per_day: null });
  });

  it("streams exports as a Response or as records, erases a visitor and reads the audit log", async () => {
    const id = (await client.chatbots.startConversation("demo", { visitor_id: "v-export" })).data.conversation_id;
    await client.conversations.addMessage(id, { message: "to export", role: "user" });
    const csv = await client.conversations.export({ format: "csv", chatbot: "demo" });
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(await csv.text()).toContain("to export");
    const records = [];
    for await (const record of client.conversations.exportRecords({ chatbot: "demo" })) records.push(record);
    expect(records.find((r) => r.id === id)?.messages.map((m) => m.content)).toEqual(["to export"]);
    expect(await (await client.leads.export()).text()).toMatch(/^id,chatbot,conversation_id/);
    const leads = [];
    for await (const lead of client.leads.exportRecords()) leads.push(lead);
    expect(leads.length).toBeGreaterThan(0);
    await expect(client.conversations.export({ format: "xml" as never })).rejects.toMatchObject({ status: 422, errors: { format: expect.any(Array) } });

    expect((await client.visitors.erase({ visitor_id: "v-export" })).data).toEqual({ conversations: 1, messages: 1, leads: 0, webhook_deliveries: 0 });
    await expect(client.visitors.erase({})).rejects.toMatchObject({ status: 422 });
    expect((await client.audit({ limit: 1 })).data[0]).toMatchObject({ action: "visitor_erased", counts: { conversations: 1 } });
  });

  it("corrects an answer from a reply and manages a chatbot's corrections", async () => {
    const id = (await client.chatbots.startConversation("demo")).data.conversation_id;
    const { data: reply } = await client.chatbots.send("demo", id, "Do you ship to Canada?");
    if (reply.reply === null) throw new Error("the bot did not answer");
    const { data: fixed } = await client.conversations.correctMessage(id, reply.message_id, { answer: "Yes, in **5 days**." });
    expect(fixed).toMatchObject({ question: "Do you ship to Canada?", answer: "Yes, in **5 days**.", source_name: null });
    const { data: again } = await client.chatbots.send("demo", id, "Do you ship to Canada?");
    expect(again.reply).toContain("<strong>5 days</strong>");
    const { data: added } = await client.corrections.create("demo", { question: "Is there a free plan?", answer: "No.", source_url: "https://example.com/pricing" });
    expect((await client.corrections.update("demo", added.id, { answer: "Only for schools." })).data).toMatchObject({ answer: "Only for schools.", source_url: "https://example.com/pricing" });
    expect((await client.corrections.list("demo", { per_page: 10 })).data.map((c) => c.id)).toEqual([added.id, fixed.id]);
    expect((await client.corrections.delete("demo", fixed.id)).data).toEqual({ id: fixed.id });
    await expect(client.corrections.create("demo", { question: "", answer: "x" })).rejects.toMatchObject({ status: 422, errors: { question: expect.any(Array) } });
  });

  it("has a method for every route of the API", () => {
    // Runs after the tests above, which call every method once.
    expect([...routesHit].sort()).toEqual(apiRoutes.map((r) => `${r.method} ${r.path}`).sort());
  });

  it("throws ChatsvcError with the status, message and field errors", async () => {
    const conversation = (await client.chatbots.startConversation("demo")).data.conversation_id;
    const invalid = await client.chatbots.send("demo", conversation, "").catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(ChatsvcError);
    expect(invalid).toMatchObject({ status: 422, message: "The message field is required.", errors: { message: ["The message field is required."] } });

    await expect(client.chatbots.get("nope")).rejects.toMatchObject({ status: 403 });
    await expect(client.conversations.get(999_999)).rejects.toMatchObject({ status: 404, message: "Conversation not found" });
    const anonymous = createClient({ baseUrl: h.api, apiKey: "sk_live_wrong" });
    await expect(anonymous.auth.test()).rejects.toMatchObject({ name: "ChatsvcError", status: 401, message: "Invalid API key" });
    expect(() => client.conversations.get(1.5)).toThrow(TypeError);
  });
});

describe("retrying once after a 500", () => {
  let h: Harness;
  let fake: FakeOpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ reply: "Fake **answer** about Widgetron." });
  });
  afterAll(() => fake.close());
  afterEach(() => h.close());

  it("retries a failed send once; nothing from the failed attempt is stored", async () => {
    h = await startHarness({ chatModel: "openai:fake", openaiBaseUrl: fake.baseUrl, openaiApiKey: "test" });
    await ingestDocs(h.service, "demo", DOCS);
    fake.behave({ chat: "fail" });
    const statuses: number[] = [];
    const client = createClient({
      baseUrl: h.api,
      apiKey: h.tenant.key.key,
      retryDelayMs: 10,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        statuses.push(res.status);
        if (res.status === 500) fake.behave({ chat: "ok" }); // the provider recovers before the retry
        return res;
      },
    });
    const id = (await client.chatbots.startConversation("demo")).data.conversation_id;
    const before = (await rowCounts(h.service));
    const { data } = await client.chatbots.send("demo", id, "How do I install Widgetron?");
    expect(statuses).toEqual([201, 500, 200]);
    expect(data.reply).toContain("Fake <strong>answer</strong>");
    const after = (await rowCounts(h.service));
    expect(after.messages - before.messages).toBe(2);
    expect(after.credits_used - before.credits_used).toBe(1);
  });

  it("gives up after the second 500, with the service's details", async () => {
    h = await startHarness({ chatModel: "openai:fake", openaiBaseUrl: fake.baseUrl, openaiApiKey: "test" });
    await ingestDocs(h.service, "demo", DOCS);
    fake.behave({ chat: "fail" });
    const client = createClient({ baseUrl: h.api, apiKey: h.tenant.key.key, retryDelayMs: 10 });
    const id = (await client.chatbots.startConversation("demo")).data.conversation_id;
    const calls = fake.calls;
    const error = await client.chatbots.send("demo", id, "How do I install Widgetron?").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatsvcError);
    expect(error).toMatchObject({ status: 500, details: { conversation_id: id } });
    expect(fake.calls - calls).toBe(2);
  });

  it("does not retry other failures", async () => {
    h = await startHarness();
    const statuses: number[] = [];
    const client = createClient({
      baseUrl: h.api,
      apiKey: h.tenant.key.key,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        statuses.push(res.status);
        return res;
      },
    });
    await expect(client.chatbots.send("demo", 999_999, "hi")).rejects.toMatchObject({ status: 404 });
    expect(statuses).toEqual([404]);
  });
});
