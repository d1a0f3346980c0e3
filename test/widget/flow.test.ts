import { gunzipSync } from "node:zlib";
import { H3 } from "h3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DomainEvent } from "../../src/core/events.js";
import { createWidgetApp } from "../../src/h3.js";
import { startHarness, type Harness } from "../support/harness.js";
import { parseSseText } from "../support/sse.js";
import { openWidgetConversation, widgetCall } from "./support.js";

let h: Harness;
let events: DomainEvent[];
beforeEach(async () => {
  h = await startHarness();
  events = [];
  h.service.on("*", (e) => void events.push(e as DomainEvent));
});
afterEach(async () => {
  await h.close();
});

const QUESTION = "How do I create an API key?";

describe("a visitor's conversation through the widget", () => {
  it("is a widget conversation of the organisation: same replies, credits and events as the API", async () => {
    const started = await widgetCall(h, "/widget/demo/conversations", { json: { visitor_id: "v-1", page_url: "https://shop.example/pricing?x=1" } });
    expect(started.status).toBe(201);
    expect(started.body.data).toMatchObject({ visitor_id: "v-1", is_ended: false, session_id: expect.stringMatching(/^widget_/), token: expect.stringMatching(/^v1\./) });
    expect(Date.parse(started.body.data.token_expires_at)).toBeGreaterThan(Date.now() + 11 * 3600_000);
    const { conversation_id: id, token } = started.body.data;

    const reply = await widgetCall(h, `/widget/demo/conversations/${id}/messages`, { token, json: { message: QUESTION } });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ conversation_id: id, cannot_answer: false });
    expect(reply.body.data.reply).toContain('<div class="svc-branding">');
    expect(reply.body.data.sources.length).toBeGreaterThan(0);
    // The organisation's credits are charged, but their figures (and webhook actions) are not the visitor's business.
    expect(Object.keys(reply.body.data).sort()).toEqual(["cannot_answer", "conversation_id", "message_id", "reply", "sources"]);
    expect(reply.body).not.toHaveProperty("meta");
    expect((await h.service.credits.status(h.tenant.organization.id)).credits_used).toBe(1);

    const rated = await widgetCall(h, `/widget/demo/conversations/${id}/messages/rate`, { token, json: { message_id: reply.body.data.message_id, rating: "good" } });
    expect(rated.body.data).toEqual({ message_id: reply.body.data.message_id, rating: "good" });

    const lead = await widgetCall(h, `/widget/demo/conversations/${id}/leads`, { token, json: { name: "Ana", email: "ana@example.com", phone: "" } });
    expect(lead.status).toBe(201);
    const leads = await h.call("/leads");
    expect(leads.body.data).toHaveLength(1);
    expect(leads.body.data[0]).toMatchObject({ email: "ana@example.com", source: "widget", source_url: "https://shop.example/pricing?x=1", conversation_id: id });

    const history = await widgetCall(h, `/widget/demo/conversations/${id}`, { token });
    expect(history.body.data).toMatchObject({ source: "widget", message_count: 2 });
    expect(history.body.data.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);

    const ended = await widgetCall(h, `/widget/demo/conversations/${id}/end`, { token, method: "POST" });
    expect(ended.body.data).toMatchObject({ conversation_id: id, message_count: 2 });

    const account = await h.call(`/conversations/${id}`);
    expect(account.body.data).toMatchObject({ source: "widget", is_ended: true, visitor: { ip: "127.0.0.1" } });
    expect(events.map((e) => e.name)).toEqual(["conversation_started", "message_received", "lead_captured", "conversation_ended"]);
    expect(events[0]!.data).toMatchObject({ source: "widget", source_url: "https://shop.example/pricing?x=1" });
  });

  it("streams the reply as Server-Sent Events when asked, with the CORS grant on the stream", async () => {
    await h.service.chatbots.update("demo", { allowed_origins: ["https://shop.example"] });
    const { id, token } = await openWidgetConversation(h, "demo", "https://shop.example");
    const res = await fetch(`${h.server.url}/widget/demo/conversations/${id}/messages`, {
      method: "POST",
      headers: { origin: "https://shop.example", "x-widget-token": token, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ message: QUESTION }),
    });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://shop.example");
    const frames = parseSseText(await res.text());
    expect(frames.filter((f) => f.event === "delta").length).toBeGreaterThan(1);
    const done = frames.at(-1)!;
    expect(done.event).toBe("done");
    expect(done.data.data.reply).toContain("svc-branding");
    expect(done.data.data).not.toHaveProperty("actions");
    expect(done.data.meta ?? {}).toEqual({});
  });

  it("counts against the organisation's credits: refused with 429 when they are spent, without showing the figures", async () => {
    await h.service.orgs.update(h.tenant.organization.id, { credits_monthly: 0 });
    const { id, token } = await openWidgetConversation(h);
    const refused = await widgetCall(h, `/widget/demo/conversations/${id}/messages`, { token, json: { message: QUESTION } });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ success: false, message: "Monthly credit limit reached" });
  });

  it("stores visitor text as it was typed: markup in it is data, never rendered by the service", async () => {
    const { id, token } = await openWidgetConversation(h);
    const attack = '<img src=x onerror="alert(1)"><b>hi</b>';
    await widgetCall(h, `/widget/demo/conversations/${id}/messages`, { token, json: { message: attack } });
    const history = await widgetCall(h, `/widget/demo/conversations/${id}`, { token });
    expect(history.body.data.messages[0]).toMatchObject({ role: "user", content: attack });
    expect(history.body.data.messages[1].content).not.toContain("onerror");
  });

  it("checks input like the API: 422 for an empty message, 400 after the conversation ended", async () => {
    const { id, token } = await openWidgetConversation(h);
    const empty = await widgetCall(h, `/widget/demo/conversations/${id}/messages`, { token, json: { message: "" } });
    expect(empty.status).toBe(422);
    expect(empty.body.errors).toHaveProperty("message");
    const badJson = await widgetCall(h, `/widget/demo/conversations/${id}/messages`, { token, method: "POST", body: "{", headers: { "content-type": "application/json" } });
    expect(badJson.status).toBe(400);
    await widgetCall(h, `/widget/demo/conversations/${id}/end`, { token, method: "POST" });
    const late = await widgetCall(h, `/widget/demo/conversations/${id}/messages`, { token, json: { message: QUESTION } });
    expect(late).toMatchObject({ status: 400, body: { message: "Conversation has already ended" } });
    const notObject = await widgetCall(h, "/widget/demo/conversations", { json: ["x"] });
    expect(notObject.status).toBe(422);
  });
});

describe("the script and the demo page", () => {
  it("serves widget.js small, gzipped, cacheable and revalidated by ETag", async () => {
    const res = await fetch(`${h.server.url}/widget.js`, { headers: { "accept-encoding": "gzip" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("cache-control")).toMatch(/max-age=\d+/);
    const raw = await fetch(`${h.server.url}/widget.js`, { headers: { "accept-encoding": "identity" } });
    const source = await raw.text();
    expect(source).toContain("attachShadow");
    expect(source).not.toMatch(/sk_live_/);
    // fetch would decode gzip itself: read the bytes as sent.
    const compressed = await rawBody(`${h.server.url}/widget.js`);
    expect(gunzipSync(compressed).toString()).toBe(source);
    expect(compressed.length).toBeLessThan(30 * 1024);
    const again = await fetch(`${h.server.url}/widget.js`, { headers: { "if-none-match": res.headers.get("etag")! } });
    expect(again.status).toBe(304);
    const head = await fetch(`${h.server.url}/widget.js`, { method: "HEAD" });
    expect([head.status, head.headers.get("etag")]).toEqual([200, res.headers.get("etag")]);
  });

  it("shows at / a page embedding the demo bot's widget from this server", async () => {
    const res = await fetch(`${h.server.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("content-security-policy")).toMatch(/script-src 'self'/);
    const html = await res.text();
    expect(html).toContain('<script src="/widget.js" data-chatbot="demo" async></script>');
    expect(html).toContain(`&lt;script src=&quot;${h.server.url}/widget.js&quot; data-chatbot=&quot;demo&quot; async&gt;`);
    // Uptime monitors ask with HEAD: the same answer without a body.
    const head = await fetch(`${h.server.url}/`, { method: "HEAD" });
    expect([head.status, head.headers.get("content-type"), await head.text()]).toEqual([200, res.headers.get("content-type"), ""]);
  });

  it("mounts under a prefix of the site owner's own h3 app, where no chatbot is exempt from allowed_origins", async () => {
    const app = new H3().mount("/chat", createWidgetApp(h.service));
    await h.service.chatbots.update("demo", { allowed_origins: ["https://shop.example"] });
    expect((await app.request("/chat/widget.js")).status).toBe(200);
    const config = await app.request("http://site.example/chat/widget/demo/config", { headers: { origin: "https://shop.example" } });
    expect(config.status).toBe(200);
    expect(config.headers.get("access-control-allow-origin")).toBe("https://shop.example");
    const fromOwnPage = { headers: { origin: "http://site.example", host: "site.example" } };
    expect((await app.request("http://site.example/chat/widget/demo/config", fromOwnPage)).status).toBe(403);
    const exempting = new H3().mount("/chat", createWidgetApp(h.service, { sameOriginSlugs: ["demo"], ownOrigins: ["http://site.example"] }));
    expect((await exempting.request("http://site.example/chat/widget/demo/config", fromOwnPage)).status).toBe(200);
    // Its own origins are the ones given, not whatever Host a request names.
    const elsewhere = { headers: { origin: "http://other.example", host: "other.example" } };
    expect((await exempting.request("http://other.example/chat/widget/demo/config", elsewhere)).status).toBe(403);
  });

  it("says so, without a widget, when there is no active demo bot", async () => {
    await h.service.chatbots.update("demo", { is_active: false });
    const html = await (await fetch(`${h.server.url}/`)).text();
    expect(html).not.toContain('<script src="/widget.js"');
    expect(html).toContain("no active");
  });
});

/** The body bytes as sent (fetch would gunzip them). */
async function rawBody(url: string): Promise<Buffer> {
  const { request } = await import("node:http");
  return new Promise((resolve, reject) => {
    request(url, { headers: { "accept-encoding": "gzip" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve(Buffer.concat(chunks)));
    })
      .on("error", reject)
      .end();
  });
}
