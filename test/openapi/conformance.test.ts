import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRoutes } from "../../src/h3.js";
import { successEnvelope } from "../../src/http/envelope-schemas.js";
import { buildOpenApiDocument } from "../../src/http/openapi.js";
import { readServerSentEvents } from "../../src/client/sse.js";
import { startHarness, type Harness } from "../support/harness.js";
import { createRouteCaller, pathOf, routeById } from "./support.js";

const document = buildOpenApiDocument(apiRoutes);

let h: Harness;
let receiver: Server;
let hookUrl: string;
beforeAll(async () => {
  h = await startHarness({ webhooks: { allowPrivateNetworks: true } });
  receiver = createServer((req, res) => void req.resume().on("end", () => res.writeHead(204).end()));
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await h.close();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

describe("real answers match the documented response schemas", () => {
  it("for every route, successes and failures alike", async () => {
    const { call, succeeded } = createRouteCaller(h, document);
    const json = (body: unknown) => ({ json: body });

    await call("authTest");
    await call("authTest", { key: null });
    await call("listChatbots");
    await call("getChatbot", { params: { slug: "demo" } });
    await call("getChatbot", { params: { slug: "nope" } });
    await call("getWidgetBudget", { params: { slug: "demo" } });
    await call("setWidgetBudget", { params: { slug: "demo" }, ...json({ chatbot_per_hour: 0 }) });
    await call("setWidgetBudget", { params: { slug: "demo" }, ...json({ chatbot_per_hour: "many" }) });

    const started = await call("startConversation", {
      params: { slug: "demo" },
      ...json({ visitor_id: "v-1", visitor_name: "Ana", visitor_email: "ana@example.com", metadata: { plan: "pro" } }),
    });
    const id = started.body.data.conversation_id as number;
    const conversation = { slug: "demo", id };
    await call("sendMessage", { params: conversation, ...json({}) });
    const sent = await call("sendMessage", { params: conversation, ...json({ message: "How do I install chatsvc?" }) });
    expect(sent.body.data.reply).toContain("svc-branding");

    // The stream operation, and the send path with `Accept: text/event-stream`: a `done` event carrying the same envelope.
    const streamDone = async (operationId: string, accept?: string) => {
      const res = await fetch(`${h.api}${pathOf(routeById(operationId), conversation)}`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.tenant.key.key}`, "content-type": "application/json", ...(accept && { accept }) },
        body: JSON.stringify({ message: "How do I create an API key?" }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
      expect(Object.keys((document.paths["/chatbots/{slug}/conversations/{id}/messages/stream"]!.post as any).responses["200"].content)).toEqual(["text/event-stream"]);
      const events = [];
      for await (const event of readServerSentEvents(res.body!)) events.push(event);
      const done = JSON.parse(events.find((e) => e.event === "done")!.data);
      expect(successEnvelope(routeById("sendMessage").response).safeParse(done).error?.issues ?? []).toEqual([]);
      return done.data.message_id as number;
    };
    await streamDone("streamMessage");
    succeeded.add("streamMessage");
    await call("streamMessage", { params: conversation, ...json({}) });
    const latestReply = await streamDone("sendMessage", "text/event-stream");

    await call("rateMessage", { params: conversation, ...json({ message_id: latestReply, rating: "good" }) });
    await call("regenerateMessage", { params: { ...conversation, message_id: latestReply } });
    await call("getConversationHistory", { params: conversation });
    const lead = await call("submitLead", { params: conversation, ...json({ name: "Ana", email: "ana@example.com", message: "Call me" }) });
    const leadId = lead.body.data.lead_id as number;

    const correction = await call("createCorrection", { params: { slug: "demo" }, ...json({ question: "Do you ship to Canada?", answer: "Yes, in **5** days.", source_url: "https://example.com/shipping" }) });
    await call("createCorrection", { params: { slug: "demo" }, ...json({ question: "" }) });
    await call("listCorrections", { params: { slug: "demo" }, query: { per_page: "1" } });
    await call("listCorrections", { params: { slug: "nope" } });
    const correctionId = correction.body.data.id as number;
    await call("updateCorrection", { params: { slug: "demo", id: correctionId }, ...json({ source_name: "Shipping FAQ" }) });
    await call("updateCorrection", { params: { slug: "demo", id: 999_999 }, ...json({ answer: "No." }) });
    const corrected = await call("sendMessage", { params: conversation, ...json({ message: "Do you ship to Canada?" }) });
    expect(corrected.body.data.sources).toEqual([{ type: "correction", id: correctionId, name: "Shipping FAQ", score: 1, url: "https://example.com/shipping" }]);
    await call("correctMessage", { params: { id, message_id: corrected.body.data.message_id }, ...json({ answer: "Yes, in **4** days." }) });
    await call("correctMessage", { params: { id, message_id: corrected.body.data.message_id }, ...json({}) });
    await call("deleteCorrection", { params: { slug: "demo", id: correctionId } });
    await call("deleteCorrection", { params: { slug: "demo", id: correctionId } });

    await call("listConversations", { query: { per_page: "1" } });
    await call("listConversations", { query: { per_page: "0" } });
    await call("listConversations", { query: { rating: "unrated", q: "install" } });
    await call("getConversation", { params: { id } });
    await call("getConversation", { params: { id: 999_999 } });
    await call("addConversationMessage", { params: { id }, ...json({ message: "An operator says **hi**" }) });
    await call("requestHandoff", { params: conversation, ...json({ reason: "A person, please" }) });
    await call("sendMessage", { params: conversation, ...json({ message: "Anyone there?" }) });
    await call("handOffConversation", { params: { id }, ...json({ reason: "Refund" }) });
    await call("addConversationMessage", { params: { id }, ...json({ message: "I'm **Ana**, how can I help?", role: "agent", agent_name: "Ana" }) });
    await call("releaseConversation", { params: { id } });
    await call("handOffConversation", { params: { id: 999_999 } });
    await call("endConversation", { params: { id } });
    await call("releaseConversation", { params: { id } });
    await call("endConversation", { params: { id } });
    await call("endChatbotConversation", { params: conversation });
    await call("sendMessage", { params: conversation, ...json({ message: "Still there?" }) });

    await call("listLeads", { query: { chatbot: "demo" } });
    await call("getLead", { params: { id: leadId } });
    await call("updateLead", { params: { id: leadId }, ...json({ company: "Example Ltd" }) });
    await call("updateLead", { params: { id: leadId }, ...json({}) });
    await call("getAnalytics", { query: { chatbot: "demo", interval: "week" } });
    await call("getAnalytics", { query: { interval: "month" } });
    await call("getAnalytics", { query: { chatbot: "nope" } });
    await call("listUnansweredQuestions", { query: { chatbot: "demo", per_page: "1" } });
    await call("listSourceCitations", { query: { chatbot: "demo" } });
    await call("getSampleLead");
    await call("getSampleConversation");

    await call("exportConversations", { query: { format: "csv" } });
    await call("exportConversations", { query: { chatbot: "demo", since: "2020-01-01" } });
    await call("exportConversations", { query: { format: "xml" } });
    await call("exportLeads");
    await call("exportLeads", { query: { format: "jsonl" } });
    await call("exportLeads", { query: { until: "soon" } });
    await call("eraseVisitor", { query: { visitor_id: "v-nobody" } });
    await call("eraseVisitor", { query: { visitor_id: "v-nobody", email: "x@example.com" } });
    await call("listAudit", { query: { limit: "10" } });
    await call("listAudit", { query: { limit: "none" } });

    const registered = await call("registerWebhook", { ...json({ url: hookUrl, events: ["lead_captured"] }) });
    expect(registered.status).toBe(201);
    expect(registered.body.data.secret).toMatch(/^whsec_/);
    const updated = await call("registerWebhook", { ...json({ url: hookUrl, events: ["lead_captured", "conversation_ended"], name: "CRM" }) });
    expect(updated.status).toBe(200);
    await call("listWebhooks");
    const tested = await call("testWebhook", { params: { id: registered.body.data.id } });
    expect(tested.body.data.delivered).toBe(true);
    await call("testWebhook", { params: { id: 999_999 } });
    await call("deleteWebhook", { params: { id: registered.body.data.id } });
    await call("deleteWebhook", { params: { id: registered.body.data.id } });
    await call("getOpenApiDocument", { key: null });

    expect([...succeeded].sort()).toEqual(apiRoutes.map((r) => r.operationId).sort());
  });
});

describe("documented request constraints are the ones the server enforces", () => {
  type Schema = { type?: string | string[]; maxLength?: number; anyOf?: Schema[]; properties?: Record<string, Schema>; required?: string[] };
  const maxLengthOf = (s: Schema): number | undefined => s.maxLength ?? s.anyOf?.map(maxLengthOf).find((n) => n !== undefined);

  it("every required body field is required, and every string's maxLength is enforced", async () => {
    const conversationId = (await h.call("/chatbots/demo/conversations", { json: {} })).body.data.conversation_id as number;
    const leadId = (await h.call(`/chatbots/demo/conversations/${conversationId}/leads`, { json: { email: "lead@example.com" } })).body.data.lead_id as number;
    const params = { slug: "demo", id: conversationId, message_id: 1 };
    let checked = 0;
    for (const route of apiRoutes.filter((r) => r.body)) {
      const op = document.paths[route.path.replace(/:(\w+)/g, "{$1}")]![route.method.toLowerCase()] as { requestBody: { content: Record<string, { schema: Schema }> } };
      const schema = op.requestBody.content["application/json"]!.schema;
      const path = pathOf(route, route.path.startsWith("/leads") ? { id: leadId } : params);
      const empty = await h.call(path, { method: route.method, json: {} });
      for (const field of schema.required ?? []) {
        expect(empty.status, `${route.operationId} without ${field}`).toBe(422);
        expect(Object.keys(empty.body.errors), route.operationId).toContain(field);
        checked++;
      }
      for (const [field, property] of Object.entries(schema.properties ?? {})) {
        const max = maxLengthOf(property);
        if (max === undefined) continue;
        const tooLong = await h.call(path, { method: route.method, json: { [field]: "x".repeat(max + 1) } });
        expect(tooLong.status, `${route.operationId} with ${field} of ${max + 1} characters`).toBe(422);
        expect(Object.keys(tooLong.body.errors), route.operationId).toContain(field);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(15);
  });
});
