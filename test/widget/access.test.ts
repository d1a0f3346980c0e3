import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { listenOrigins } from "../../src/http/own-origins.js";
import { addTenant, startHarness, type Harness } from "../support/harness.js";
import { openWidgetConversation, widgetCall } from "./support.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const SHOP = "https://shop.example";

describe("which websites may use a chatbot's widget", () => {
  it("answers a listed origin with exactly that origin (never *), and Vary: Origin", async () => {
    h = await startHarness();
    await h.service.chatbots.update("demo", { allowed_origins: [SHOP, "https://b.example"] });
    const res = await widgetCall(h, "/widget/demo/config", { origin: SHOP });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(SHOP);
    expect(res.headers.get("vary")).toMatch(/origin/i);
    expect(res.body.data).toMatchObject({ slug: "demo", display_name: "chatsvc assistant", appearance: { widget_theme: "light" }, branding: { required: true } });
    expect(res.body.data).not.toHaveProperty("instructions");
    expect(res.body.data).not.toHaveProperty("allowed_origins");
  });

  it("refuses an origin that is not listed with 403 in the envelope, and no CORS grant", async () => {
    h = await startHarness();
    await h.service.chatbots.update("demo", { allowed_origins: [SHOP] });
    for (const origin of ["https://evil.example", "https://shop.example.evil.example", "http://shop.example", "null"]) {
      const res = await widgetCall(h, "/widget/demo/config", { origin });
      expect(res.status, origin).toBe(403);
      expect(res.body).toEqual({ success: false, message: "Chatbot not found, or this website is not allowed to use it" });
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect(res.headers.get("vary")).toMatch(/origin/i);
    }
    const posted = await widgetCall(h, "/widget/demo/conversations", { origin: "https://evil.example", json: {} });
    expect(posted.status).toBe(403);
    expect(await (await h.service.conversations.list(h.tenant.organization.id)).meta.total).toBe(0);
  });

  it("keeps the widget off for a chatbot with no allowed origins, even on this server's own origin", async () => {
    h = await startHarness();
    const other = await h.service.chatbots.create({ organization_id: h.tenant.organization.id, slug: "support", name: "Support" });
    expect(other.allowed_origins).toEqual([]);
    for (const origin of [SHOP, h.server.url]) {
      const res = await widgetCall(h, "/widget/support/config", { origin });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe("Chatbot not found, or this website is not allowed to use it");
    }
  });

  it("lets the demo page's own origin use the demo bot unconfigured, and refuses requests from no browser page", async () => {
    h = await startHarness();
    expect((await widgetCall(h, "/widget/demo/config")).status).toBe(200);
    // Browsers send no Origin on same-origin GETs, only Sec-Fetch-Site.
    expect((await widgetCall(h, "/widget/demo/config", { origin: null, headers: { "sec-fetch-site": "same-origin" } })).status).toBe(200);
    const bare = await widgetCall(h, "/widget/demo/config", { origin: null });
    expect(bare.status).toBe(403);
    expect(bare.body.message).toMatch(/no Origin header/);
  });

  it("answers an unknown slug exactly as a chatbot the page may not use, so slugs cannot be probed", async () => {
    h = await startHarness();
    await h.service.chatbots.create({ organization_id: h.tenant.organization.id, slug: "support", name: "Support", allowed_origins: ["https://b.example"] });
    await h.service.chatbots.create({ organization_id: h.tenant.organization.id, slug: "off", name: "Off" });
    await h.service.chatbots.create({ organization_id: h.tenant.organization.id, slug: "asleep", name: "Asleep", allowed_origins: [SHOP] });
    await h.service.chatbots.update("asleep", { is_active: false });
    // Everything but the per-request values: the status, the body and every header a page or script can read.
    const answer = async (slug: string, init: Parameters<typeof widgetCall>[2]) => {
      const res = await widgetCall(h, `/widget/${slug}/config`, init);
      const headers: [string, string][] = [];
      res.headers.forEach((value, name) => void (name !== "date" && name !== "x-request-id" && headers.push([name, value])));
      return { status: res.status, body: res.text, headers };
    };
    const requests: Parameters<typeof widgetCall>[2][] = [
      { origin: SHOP },
      { origin: h.server.url },
      { origin: null },
      { origin: null, headers: { "sec-fetch-site": "same-origin" } },
      { origin: "null" },
    ];
    for (const init of requests) {
      const unknown = await answer("no-such-bot", init);
      expect(unknown.status, JSON.stringify(init)).toBe(403);
      for (const slug of ["support", "off", "asleep"]) expect(await answer(slug, init), `${slug} ${JSON.stringify(init)}`).toEqual(unknown);
    }
    const preflight = (slug: string) =>
      widgetCall(h, `/widget/${slug}/conversations`, { method: "OPTIONS", origin: SHOP, headers: { "access-control-request-method": "POST" } });
    const [unknown, known] = await Promise.all([preflight("no-such-bot"), preflight("support")]);
    expect([known.status, known.text]).toEqual([unknown.status, unknown.text]);
  });

  it("refuses unknown and inactive chatbots alike", async () => {
    h = await startHarness();
    await h.service.chatbots.update("demo", { is_active: false });
    for (const slug of ["demo", "nope"]) expect((await widgetCall(h, `/widget/${slug}/config`)).status).toBe(403);
  });

  it("answers preflights for allowed origins only, naming the methods and the token header", async () => {
    h = await startHarness();
    await h.service.chatbots.update("demo", { allowed_origins: [SHOP] });
    const preflight = (origin: string) =>
      widgetCall(h, "/widget/demo/conversations/1/messages", {
        method: "OPTIONS",
        origin,
        headers: { "access-control-request-method": "POST", "access-control-request-headers": "content-type,x-widget-token" },
      });
    const allowed = await preflight(SHOP);
    expect(allowed.status).toBe(204);
    const grant = ["allow-origin", "allow-methods", "allow-headers", "max-age"].map((name) => allowed.headers.get(`access-control-${name}`));
    expect(grant).toEqual([SHOP, "GET, POST, OPTIONS", "content-type, accept, x-widget-token", "600"]);
    expect(allowed.headers.get("vary")).toMatch(/origin/i);
    const refused = await preflight("https://evil.example");
    expect(refused.status).toBe(403);
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    expect(refused.headers.get("access-control-allow-methods")).toBeNull();
  });
});

/** A widget request with any `Host` (fetch always sends the URL's), as a page on a rebound or forged name would make it. */
function hostCall(h: Harness, path: string, headers: Record<string, string>, json?: unknown): Promise<{ status: number; headers: Record<string, unknown> }> {
  const { hostname, port } = new URL(h.server.url);
  const body = json === undefined ? undefined : JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, path, method: body ? "POST" : "GET", headers: { ...headers, ...(body && { "content-type": "application/json" }) } }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("the demo bot on this server's own origin", () => {
  it("is refused to a page on another site whose requests name that site in Host too (a forged or DNS-rebound Host)", async () => {
    h = await startHarness();
    const evil = { origin: "http://evil.example", host: "evil.example" };
    const config = await hostCall(h, "/widget/demo/config", evil);
    expect(config.status).toBe(403);
    expect(config.headers["access-control-allow-origin"]).toBeUndefined();
    expect((await hostCall(h, "/widget/demo/conversations", evil, {})).status).toBe(403);
    // A same-origin GET carries no Origin: the Host the browser addressed must be one of ours.
    const port = new URL(h.server.url).port;
    expect((await hostCall(h, "/widget/demo/config", { host: `evil.example:${port}`, "sec-fetch-site": "same-origin" })).status).toBe(403);
    expect(await (await h.service.conversations.list(h.tenant.organization.id)).meta.total).toBe(0);
  });

  it("works on the origins the server listens on: its address, and localhost for a loopback address", async () => {
    h = await startHarness();
    const port = new URL(h.server.url).port;
    for (const origin of [h.server.url, `http://localhost:${port}`]) {
      const res = await hostCall(h, "/widget/demo/config", { origin, host: new URL(origin).host });
      expect(res.status, origin).toBe(200);
      expect(res.headers["access-control-allow-origin"], origin).toBe(origin);
    }
    expect((await hostCall(h, "/widget/demo/config", { host: `localhost:${port}`, "sec-fetch-site": "same-origin" })).status).toBe(200);
  });

  it("works on publicUrl's origin only when it is set", async () => {
    h = await startHarness({ publicUrl: "https://chat.example.com/support" });
    const own = await hostCall(h, "/widget/demo/config", { origin: "https://chat.example.com", host: "chat.example.com" });
    expect(own.status).toBe(200);
    expect((await hostCall(h, "/widget/demo/config", { host: "chat.example.com", "sec-fetch-site": "same-origin" })).status).toBe(200);
    // Same host, other scheme: another origin.
    expect((await hostCall(h, "/widget/demo/config", { origin: "http://chat.example.com", host: "chat.example.com" })).status).toBe(403);
    expect((await hostCall(h, "/widget/demo/config", { origin: h.server.url, host: new URL(h.server.url).host })).status).toBe(403);
    // The demo page's snippet names the public URL, prefix included.
    expect(await (await fetch(`${h.server.url}/`)).text()).toContain("https://chat.example.com/support/widget.js");
  });

  it("counts every interface and localhost as the server's own when it listens on all of them", () => {
    const origins = listenOrigins({ address: "0.0.0.0", port: 3000 });
    expect(origins).toEqual(expect.arrayContaining(["http://127.0.0.1:3000", "http://localhost:3000", "http://0.0.0.0:3000"]));
    expect(listenOrigins({ address: "127.0.0.1", port: 80 })).toEqual(["http://127.0.0.1", "http://localhost"]);
    expect(listenOrigins({ address: "::1", port: 8080 })).toEqual(["http://[::1]:8080", "http://localhost:8080"]);
  });
});

describe("visitor tokens", () => {
  it("scope a visitor to their own conversation: another conversation answers 404 and is left untouched", async () => {
    h = await startHarness();
    const a = await openWidgetConversation(h);
    const b = await openWidgetConversation(h);
    const attempts: [string, string, unknown][] = [
      ["GET", `/widget/demo/conversations/${b.id}`, undefined],
      ["POST", `/widget/demo/conversations/${b.id}/messages`, { message: "hello" }],
      ["POST", `/widget/demo/conversations/${b.id}/messages/rate`, { message_id: 1, rating: "bad" }],
      ["POST", `/widget/demo/conversations/${b.id}/leads`, { email: "x@example.com" }],
      ["POST", `/widget/demo/conversations/${b.id}/end`, undefined],
    ];
    for (const [method, path, json] of attempts) {
      const res = await widgetCall(h, path, { method, token: a.token, ...(json !== undefined && { json }) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toEqual({ success: false, message: "Conversation not found" });
    }
    const history = await h.service.conversations.history(h.tenant.organization.id, "demo", b.id);
    expect(history).toMatchObject({ is_ended: false, message_count: 0 });
    expect(await (await h.service.leads.list(h.tenant.organization.id)).meta.total).toBe(0);
    expect((await widgetCall(h, `/widget/demo/conversations/${a.id}`, { token: a.token })).status).toBe(200);
  });

  it("are required, must be genuine, and do not carry over to another chatbot", async () => {
    h = await startHarness();
    const a = await openWidgetConversation(h);
    expect(await widgetCall(h, `/widget/demo/conversations/${a.id}`)).toMatchObject({ status: 401, body: { message: "Widget token is required" } });
    const [v, body, sig] = a.token.split(".");
    const claims = JSON.parse(Buffer.from(body!, "base64url").toString());
    const edited = `${v}.${Buffer.from(JSON.stringify({ ...claims, conversation_id: a.id + 1 })).toString("base64url")}.${sig}`;
    expect(await widgetCall(h, `/widget/demo/conversations/${a.id + 1}`, { token: edited })).toMatchObject({ status: 401, body: { message: "Invalid widget token" } });

    const tenant = await addTenant(h.service);
    await h.service.chatbots.update(tenant.chatbot.slug, { allowed_origins: [SHOP] });
    const res = await widgetCall(h, `/widget/${tenant.chatbot.slug}/conversations/${a.id}`, { origin: SHOP, token: a.token });
    expect(res.status).toBe(404);
  });

  it("stop working on a site once its origin is removed from the list", async () => {
    h = await startHarness();
    await h.service.chatbots.update("demo", { allowed_origins: [SHOP] });
    const a = await openWidgetConversation(h, "demo", SHOP);
    expect((await widgetCall(h, `/widget/demo/conversations/${a.id}`, { origin: SHOP, token: a.token })).status).toBe(200);
    await h.service.chatbots.update("demo", { allowed_origins: [] });
    expect((await widgetCall(h, `/widget/demo/conversations/${a.id}`, { origin: SHOP, token: a.token })).status).toBe(403);
  });
});

describe("rate limits", () => {
  it("answer 429 with Retry-After once one IP has used its requests, readable by the page (CORS kept)", async () => {
    h = await startHarness({ widget: { ipRatePerMinute: 3 } });
    await h.service.chatbots.update("demo", { allowed_origins: [SHOP] });
    for (let i = 0; i < 3; i++) expect((await widgetCall(h, "/widget/demo/config", { origin: SHOP })).status).toBe(200);
    const limited = await widgetCall(h, "/widget/demo/conversations", { origin: SHOP, json: {} });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get("retry-after"))).toBeLessThanOrEqual(20);
    expect(limited.headers.get("access-control-allow-origin")).toBe(SHOP);
    expect(limited.body).toMatchObject({ success: false, message: expect.stringMatching(/^Too many requests/) });
    expect(await (await h.service.conversations.list(h.tenant.organization.id)).meta.total).toBe(0);
  });

  it("answer 429 for one visitor's conversation while other visitors on the same IP carry on", async () => {
    h = await startHarness({ widget: { visitorRatePerMinute: 2 } });
    const a = await openWidgetConversation(h);
    const b = await openWidgetConversation(h);
    const read = (c: { id: number; token: string }) => widgetCall(h, `/widget/demo/conversations/${c.id}`, { token: c.token });
    expect((await read(a)).status).toBe(200);
    expect((await read(a)).status).toBe(200);
    const limited = await read(a);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await read(b)).status).toBe(200);
  });
});
