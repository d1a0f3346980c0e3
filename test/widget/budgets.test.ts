import { afterEach, describe, expect, it } from "vitest";
import type { ChatServiceOptions } from "../../src/core/config.js";
import type { DomainEvent } from "../../src/core/events.js";
import { startServer, type RunningServer } from "../../src/http/server.js";
import { startHarness, type Harness } from "../support/harness.js";
import { openWidgetConversation, widgetCall } from "./support.js";

const QUESTION = "How do I create an API key?";

let h: Harness | undefined;
let logged: RunningServer | undefined;
afterEach(async () => {
  await logged?.close();
  await h?.close();
  h = logged = undefined;
});

/**
 * A harness whose widget is served by a second server writing its log lines into `lines`;
 * `trustProxy: true` lets a test speak for many visitor IPs through `X-Forwarded-For`.
 */
async function budgetHarness(widget: ChatServiceOptions["widget"], options: ChatServiceOptions = {}) {
  h = await startHarness({ trustProxy: true, widget: { ipRatePerMinute: 10_000, visitorRatePerMinute: 10_000, ...widget }, ...options });
  const lines: Record<string, unknown>[] = [];
  logged = await startServer(h.service, { port: 0, logSink: (line) => lines.push(JSON.parse(line)) });
  const events: DomainEvent[] = [];
  h.service.on("budget_exhausted", (e) => void events.push(e as DomainEvent));
  const via = { ...h, server: logged };
  const send = async (ip: string, conversation?: { id: number; token: string }) => {
    const { id, token } = conversation ?? (await openWidgetConversation(via));
    return widgetCall(via, `/widget/demo/conversations/${id}/messages`, { token, json: { message: QUESTION }, headers: { "x-forwarded-for": ip }, origin: logged!.url });
  };
  return { h, lines, events, send, via };
}

const exhaustedLines = (lines: Record<string, unknown>[]) => lines.filter((l) => l.msg === "widget budget exhausted");

describe("widget budgets", () => {
  it("refuse a visitor's messages past their daily budget with 429 and Retry-After until the next UTC day, charging nothing", async () => {
    const { h, send, events, lines } = await budgetHarness({ visitorMessagesPerDay: 2 });
    const conversation = await openWidgetConversation({ ...h, server: logged! });
    expect((await send("203.0.113.1", conversation)).status).toBe(200);
    expect((await send("203.0.113.1", conversation)).status).toBe(200);
    const refused = await send("203.0.113.1", conversation);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ success: false, message: expect.stringContaining("message limit") });
    const untilMidnight = Math.ceil((86_400_000 - (Date.now() % 86_400_000)) / 1000);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(untilMidnight + 1);
    // A new conversation is the same visitor: the budget follows the client IP, not the token.
    expect((await send("203.0.113.1")).status).toBe(429);
    // Another visitor still gets answers.
    expect((await send("198.51.100.2")).status).toBe(200);
    expect((await h.service.credits.status(h.tenant.organization.id)).credits_used).toBe(3);
    expect(events.map((e) => e.data)).toEqual([expect.objectContaining({ budget: "visitor_per_day", limit: 2, agent: expect.objectContaining({ slug: "demo" }) })]);
    expect(exhaustedLines(lines)).toEqual([expect.objectContaining({ level: "warn", chatbot: "demo", budget: "visitor_per_day", limit: 2 })]);
  });

  it("hold the chatbot's hourly budget exactly under concurrent sends from many IPs, announcing it once", async () => {
    const { h, send, events, lines } = await budgetHarness({ chatbotMessagesPerHour: 5 });
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => send(`192.0.2.${i + 1}`)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(11);
    const retryAfter = Number(answers.find((a) => a.status === 429)!.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect((await h.service.credits.status(h.tenant.organization.id)).credits_used).toBe(5);
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ budget: "chatbot_per_hour", limit: 5 });
    const { period_start, resets_at } = events[0]!.data as { period_start: string; resets_at: string };
    expect(Date.parse(resets_at) - Date.parse(period_start)).toBe(3_600_000);
    expect(exhaustedLines(lines)).toHaveLength(1);
  });

  it("give a message back when it was not answered (the model failed)", async () => {
    const { send } = await budgetHarness({ visitorMessagesPerDay: 1 }, { chatModel: "openai:gpt-test", openaiBaseUrl: "http://127.0.0.1:9/v1", openaiApiKey: "sk-test" });
    expect((await send("203.0.113.9")).status).toBe(500);
    expect((await send("203.0.113.9")).status).toBe(500);
  });

  it("do not count sends made with an API key", async () => {
    const { h, send } = await budgetHarness({ chatbotMessagesPerHour: 1 });
    for (let i = 0; i < 3; i++) {
      const opened = await h.call("/chatbots/demo/conversations", { json: {} });
      const sent = await h.call(`/chatbots/demo/conversations/${opened.body.data.conversation_id}/messages`, { json: { message: QUESTION } });
      expect(sent.status).toBe(200);
    }
    expect((await send("203.0.113.5")).status).toBe(200);
    expect((await send("203.0.113.6")).status).toBe(429);
  });

  it("are set per chatbot through the API (null: back to the default, 0: no limit), and budget_exhausted is a webhook event", async () => {
    const { h, send } = await budgetHarness({ chatbotMessagesPerDay: 100 });
    const before = await h.call("/chatbots/demo/widget-budget");
    expect(before.body.data).toEqual({
      limits: { visitor_per_day: 50, chatbot_per_hour: 200, chatbot_per_day: 100 },
      overrides: { visitor_per_day: null, chatbot_per_hour: null, chatbot_per_day: null },
    });
    const set = await h.call("/chatbots/demo/widget-budget", { method: "PUT", json: { chatbot_per_hour: 1, visitor_per_day: 0 } });
    expect(set.status).toBe(200);
    expect(set.body.data.limits).toEqual({ visitor_per_day: 0, chatbot_per_hour: 1, chatbot_per_day: 100 });
    expect((await send("203.0.113.7")).status).toBe(200);
    expect((await send("203.0.113.8")).status).toBe(429);
    const reset = await h.call("/chatbots/demo/widget-budget", { method: "PUT", json: { chatbot_per_hour: null } });
    expect(reset.body.data.limits.chatbot_per_hour).toBe(200);
    expect((await send("203.0.113.8")).status).toBe(200);

    const bad = await h.call("/chatbots/demo/widget-budget", { method: "PUT", json: { chatbot_per_day: -1 } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toHaveProperty("chatbot_per_day");
    const hook = await h.call("/webhooks", { json: { url: "http://example.com/hooks", events: ["budget_exhausted"] } });
    expect(hook.status).toBe(201);
    expect(hook.body.data.events).toEqual(["budget_exhausted"]);
  });
});
