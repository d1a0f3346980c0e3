// The console's sign-in over real HTTP: the session cookie's attributes, one-time links, API-key sign-in,
// idle expiry, sign-out, CSRF refusals, and every console route scoped to the user's organisation.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { internalsOf } from "../../src/service.js";
import type { SqliteStorage } from "../../src/storage/sqlite/index.js";
import { runCli } from "../support/cli.js";
import { addTenant, request, startHarness, type Harness } from "../support/harness.js";

let h: Harness;
let other: Awaited<ReturnType<typeof addTenant>>;
let origin: string;

beforeAll(async () => {
  // Loopback is a trusted proxy here, so X-Forwarded-Proto from the test decides whether the request was HTTPS.
  h = await startHarness({ trustProxy: "loopback" });
  origin = h.server.url;
  other = await addTenant(h.service, "Other");
});
afterAll(() => h?.close());

/** A console request from the console's own page (its Origin), with a session cookie when given. */
function consoleCall(path: string, { cookie, json, method, headers = {} }: { cookie?: string; json?: unknown; method?: string; headers?: Record<string, string> } = {}) {
  return request(`${origin}/console/${path}`, {
    ...(method && { method }),
    ...(json !== undefined && { json }),
    headers: { origin, ...(cookie && { cookie: `chatsvc_console=${cookie}` }), ...headers },
  });
}

const cookieOf = (res: { headers: Headers }) => /chatsvc_console=([^;]*)/.exec(res.headers.get("set-cookie") ?? "")?.[1];

async function signIn(email = "owner@acme.test"): Promise<string> {
  const { token } = await h.service.consoleSessions.createLink(email);
  const res = await consoleCall("api/session", { json: { token } });
  expect(res.status).toBe(200);
  return cookieOf(res)!;
}

describe("console sign-in", () => {
  it("a link from `chatsvc console-link` signs in once: HttpOnly, SameSite=Strict cookie, not Secure over plain HTTP", async () => {
    const cli = await runCli([...h.database.cliArgs, "console-link", "--email", "owner@acme.test", "--url", origin, "--json"]);
    expect(cli.stderr).toBe("");
    const link = cli.json();
    expect(link.url).toMatch(new RegExp(`^${origin}/console/#/sign-in/[A-Za-z0-9_-]{43}$`));
    expect(Date.parse(link.expires_at) - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(Date.parse(link.expires_at) - Date.now()).toBeLessThanOrEqual(10 * 60_000);
    const token = link.url.split("/").pop();

    const res = await consoleCall("api/session", { json: { token } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ user_id: h.tenant.user.id, organization_id: h.tenant.organization.id, email: "owner@acme.test" });
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^chatsvc_console=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    expect(res.text).not.toContain(cookieOf(res)!);

    const again = await consoleCall("api/session", { json: { token } });
    expect(again.status).toBe(401);
    expect(again.body.message).toMatch(/invalid, used or expired/);
    expect(again.headers.get("set-cookie")).toBeNull();

    const me = await consoleCall("api/session", { cookie: cookieOf(res) });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ email: "owner@acme.test", organization_name: "Acme" });
  });

  it("marks the cookie Secure when a trusted proxy says the request came over HTTPS", async () => {
    const { token } = await h.service.consoleSessions.createLink("owner@acme.test");
    const res = await consoleCall("api/session", { json: { token }, headers: { "x-forwarded-proto": "https", origin: origin.replace("http:", "https:") } });
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
  });

  it("refuses an expired link, an unknown one, and a link for an unknown user", async () => {
    const { token } = await h.service.consoleSessions.createLink("owner@acme.test");
    const sqlite = (internalsOf(h.service).storage as SqliteStorage).sqlite;
    sqlite.prepare("UPDATE console_login_tokens SET expires_at = ?").run(new Date(Date.now() - 1000).toISOString());
    expect((await consoleCall("api/session", { json: { token } })).status).toBe(401);
    expect((await consoleCall("api/session", { json: { token: "x".repeat(43) } })).status).toBe(401);
    expect((await consoleCall("api/session", { json: {} })).status).toBe(422);
    await expect(h.service.consoleSessions.createLink("nobody@acme.test")).rejects.toMatchObject({ status: 404 });
  });

  it("an API key pasted once starts a session of its owner; a wrong key is the key's 401", async () => {
    const res = await consoleCall("api/session", { json: { api_key: other.key.key } });
    expect(res.status).toBe(200);
    expect(res.body.data.organization_id).toBe(other.organization.id);
    expect(res.text).not.toContain(other.key.key.slice(15));
    const wrong = await consoleCall("api/session", { json: { api_key: "sk_live_" + "x".repeat(32) } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.message).toBe("Invalid API key");
  });

  it("ends a session idle for 12 hours, and keeps one used within them", async () => {
    const idle = await signIn();
    const busy = await signIn();
    const sqlite = (internalsOf(h.service).storage as SqliteStorage).sqlite;
    const hash = (value: string) => createHash("sha256").update(value).digest("hex");
    sqlite.prepare("UPDATE console_sessions SET last_seen_at = ? WHERE session_hash = ?").run(new Date(Date.now() - 12 * 3_600_000 - 1000).toISOString(), hash(idle));
    sqlite.prepare("UPDATE console_sessions SET last_seen_at = ? WHERE session_hash = ?").run(new Date(Date.now() - 11 * 3_600_000).toISOString(), hash(busy));
    expect((await consoleCall("api/session", { cookie: idle })).status).toBe(401);
    expect((await consoleCall("api/session", { cookie: busy })).status).toBe(200);
    // Using it moved its idle clock: it is now as fresh as a new session.
    const seen = sqlite.prepare("SELECT last_seen_at FROM console_sessions WHERE session_hash = ?").pluck().get(hash(busy)) as string;
    expect(Date.now() - Date.parse(seen)).toBeLessThan(60_000);
  });

  it("sign-out ends the session on the server and clears the cookie", async () => {
    const cookie = await signIn();
    const out = await consoleCall("api/session", { cookie, method: "DELETE" });
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toMatch(/^chatsvc_console=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict$/);
    expect((await consoleCall("api/session", { cookie })).status).toBe(401);
    expect((await consoleCall("api/v1/conversations", { cookie })).status).toBe(401);
  });

  it("refuses writes from another origin or with no origin at all (CSRF), before they act", async () => {
    const cookie = await signIn();
    const create = (headers: Record<string, string>) =>
      request(`${origin}/console/api/chatbots`, { json: { slug: "csrf-bot", name: "CSRF" }, headers: { cookie: `chatsvc_console=${cookie}`, ...headers } });
    const refused: Record<string, string>[] = [{ origin: "https://evil.example" }, { origin: "null" }, {}, { "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }];
    for (const headers of refused) {
      const res = await create(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.body.message).toMatch(/Cross-site request refused/);
    }
    expect((await h.service.chatbots.list(h.tenant.organization.id)).some((b) => b.slug === "csrf-bot")).toBe(false);
    // A sign-in from another site is refused too (login CSRF).
    const { token } = await h.service.consoleSessions.createLink("owner@acme.test");
    expect((await request(`${origin}/console/api/session`, { json: { token }, headers: { origin: "https://evil.example" } })).status).toBe(403);
    // The console's own page: allowed.
    expect((await create({ "sec-fetch-site": "same-origin" })).status).toBe(201);
  });

  it("answers 401 without a session on every data route", async () => {
    for (const path of ["api/chatbots", "api/keys", "api/v1/conversations", "api/v1/leads", "api/v1/webhooks", "api/chatbots/demo/documents"]) {
      expect((await consoleCall(path)).status, path).toBe(401);
    }
  });
});

describe("the console page", () => {
  it("serves one page with a strict CSP and its bundle from this server", async () => {
    const bare = await fetch(`${origin}/console`, { redirect: "manual" });
    expect(bare.status).toBe(308);
    expect(bare.headers.get("location")).toBe("/console/");
    const page = await fetch(`${origin}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toMatch(/default-src 'self'/);
    const html = await page.text();
    expect(html).toContain('<script type="module" src="console.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);
    const script = await fetch(`${origin}/console/console.js`);
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect((await script.text()).length).toBeGreaterThan(1000);
    expect((await fetch(`${origin}/console/console.css`)).headers.get("content-type")).toMatch(/^text\/css/);
    for (const path of ["/console/", "/console/console.js", "/console/console.css"]) {
      const head = await fetch(`${origin}${path}`, { method: "HEAD" });
      expect([path, head.status, await head.text()]).toEqual([path, 200, ""]);
    }
  });
});

describe("two organisations", () => {
  it("each user sees and changes only their own organisation's chatbots, knowledge, keys and records", async () => {
    const acme = await signIn();
    const mine = await consoleCall("api/v1/chatbots/demo/conversations", { cookie: acme, json: {} });
    expect(mine.status).toBe(201);
    const conversationId = mine.body.data.conversation_id;
    const otherLogin = await h.service.consoleSessions.createLink(other.user.email);
    const them = cookieOf(await consoleCall("api/session", { json: { token: otherLogin.token } }))!;

    expect((await consoleCall("api/chatbots", { cookie: them })).body.data.map((b: { slug: string }) => b.slug)).toEqual([other.chatbot.slug]);
    expect((await consoleCall("api/v1/conversations", { cookie: them })).body.data).toEqual([]);
    expect((await consoleCall(`api/v1/conversations/${conversationId}`, { cookie: them })).status).toBe(403);
    expect((await consoleCall(`api/v1/conversations/${conversationId}/end`, { cookie: them, method: "POST" })).status).toBe(403);
    expect((await consoleCall(`api/v1/conversations/${conversationId}/handoff`, { cookie: them, method: "POST" })).status).toBe(403);
    expect((await consoleCall("api/chatbots/demo", { cookie: them, method: "PUT", json: { name: "Taken" } })).status).toBe(403);
    expect((await consoleCall("api/chatbots/demo/documents", { cookie: them })).status).toBe(403);
    expect((await consoleCall("api/chatbots/demo/documents", { cookie: them, json: { files: [{ name: "x.md", content: "# x" }] } })).status).toBe(403);
    expect((await consoleCall("api/chatbots/demo/reindex", { cookie: them, method: "POST" })).status).toBe(403);

    const keys = (await consoleCall("api/keys", { cookie: them })).body.data;
    expect(keys.map((k: { id: number }) => k.id)).toEqual([other.key.id]);
    for (const action of ["disable", "enable", "regenerate"]) {
      expect((await consoleCall(`api/keys/${h.tenant.key.id}/${action}`, { cookie: them, method: "POST" })).status).toBe(403);
    }
    expect((await consoleCall(`api/keys/${h.tenant.key.id}`, { cookie: them, method: "DELETE" })).status).toBe(403);
    expect((await consoleCall("api/keys/999999/disable", { cookie: them, method: "POST" })).status).toBe(404);
    expect((await h.call("/auth/test")).status).toBe(200);
    expect((await h.service.chatbots.get("demo")).name).not.toBe("Taken");
  });
});

describe("handoff through the console", () => {
  it("takes a conversation over, replies as an agent the visitor sees, and hands it back", async () => {
    const cookie = await signIn();
    const id = (await h.call("/chatbots/demo/conversations", { json: {} })).body.data.conversation_id;
    expect((await consoleCall(`api/v1/conversations/${id}/handoff`, { cookie, method: "POST", json: { reason: "Taken over in the console" } })).body.data.status).toBe("human");
    const reply = await consoleCall(`api/v1/conversations/${id}/messages`, { cookie, json: { role: "agent", message: "Hi, Grace from support here." } });
    expect(reply.status).toBe(201);
    const history = (await h.call(`/chatbots/demo/conversations/${id}`)).body.data.messages;
    expect(history.at(-1)).toMatchObject({ role: "agent" });
    expect(history.at(-1).content).toContain("Grace from support");
    expect((await consoleCall(`api/v1/conversations${"?status=human"}`, { cookie })).body.data.map((c: { id: number }) => c.id)).toContain(id);
    expect((await consoleCall(`api/v1/conversations/${id}/release`, { cookie, method: "POST" })).body.data.status).toBe("active");
  });
});

describe("console routes the API lacks", () => {
  it("creates and changes a chatbot, adds and removes knowledge, and manages keys; bad input is 422", async () => {
    const cookie = await signIn();
    const created = await consoleCall("api/chatbots", { cookie, json: { slug: "help", name: "Help" } });
    expect(created.status).toBe(201);
    expect(created.body.data.organization_id).toBe(h.tenant.organization.id);
    expect((await consoleCall("api/chatbots", { cookie, json: { slug: "Bad Slug", name: "x" } })).status).toBe(422);
    const updated = await consoleCall("api/chatbots/help", { cookie, method: "PUT", json: { is_active: false, appearance: { primary_color: "#112233" } } });
    expect(updated.body.data).toMatchObject({ is_active: false, appearance: { primary_color: "#112233" } });
    expect((await consoleCall("api/chatbots/help", { cookie, method: "PUT", json: { appearance: { primary_color: "blue" } } })).status).toBe(422);

    const ingested = await consoleCall("api/chatbots/help/documents", { cookie, json: { files: [{ name: "pricing.md", content: "# Pricing\n\nThe Pro plan costs 20 euros a month." }] } });
    expect(ingested.body.data).toMatchObject({ added: 1, failed: [] });
    const docs = (await consoleCall("api/chatbots/help/documents", { cookie })).body.data;
    expect(docs).toMatchObject([{ name: "pricing.md", chunk_count: 1 }]);
    expect(docs[0].bytes).toBeGreaterThan(0);
    expect((await consoleCall("api/chatbots/help/documents", { cookie, json: { files: [{ name: "tool.exe", content: "MZ" }] } })).status).toBe(422);
    expect((await consoleCall("api/chatbots/help/documents", { cookie, json: {} })).status).toBe(422);
    expect((await consoleCall(`api/chatbots/help/documents/${docs[0].id}`, { cookie, method: "DELETE" })).status).toBe(200);
    expect((await consoleCall("api/chatbots/help/documents", { cookie })).body.data).toEqual([]);

    expect((await consoleCall("api/keys", { cookie, json: { name: "ci" } })).status).toBe(422);
    const key = await consoleCall("api/keys", { cookie, json: { name: "ci", accept_attribution: true } });
    expect(key.status).toBe(201);
    expect(key.body.data.key).toMatch(/^sk_live_/);
    expect((await consoleCall("api/keys", { cookie })).body.data.every((k: Record<string, unknown>) => !("key" in k))).toBe(true);
    expect((await consoleCall(`api/keys/${key.body.data.id}/rename`, { cookie, method: "POST", json: { name: "" } })).status).toBe(422);
    expect((await consoleCall(`api/keys/${key.body.data.id}/disable`, { cookie, method: "POST" })).body.data.status).toBe("disabled");
    expect((await h.call("/auth/test", { key: key.body.data.key })).status).toBe(401);
    const regenerated = (await consoleCall(`api/keys/${key.body.data.id}/regenerate`, { cookie, method: "POST" })).body.data;
    expect(regenerated.status).toBe("active");
    expect((await h.call("/auth/test", { key: regenerated.key })).status).toBe(200);
    expect((await consoleCall(`api/keys/${key.body.data.id}`, { cookie, method: "DELETE" })).status).toBe(200);
    expect((await h.call("/auth/test", { key: regenerated.key })).status).toBe(401);
  });
});
