import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ChatServiceOptions } from "../../src/core/config.js";
import { generateApiKey, VISIBLE_PREFIX_LENGTH } from "../../src/core/keys.js";
import { startServer, type RunningServer } from "../../src/http/server.js";
import { ingestDocs, openConversation } from "../chat/helpers.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fixtures/fake-openai.js";
import { request, sharedHarness, startHarness, type Harness } from "../support/harness.js";
import { sqlOf } from "../support/sql.js";

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/*
 * One service on the default options for the tests that neither spend a rate-limit budget
 * nor change what another reads (they only add a conversation of their own): a service each
 * was set-up cost only. Tests of other options, or that close or break their service, start their own.
 */
const plain = sharedHarness();

/** A harness plus a second server on the same service whose log lines are captured. */
async function logged(options: ChatServiceOptions = {}): Promise<{ h: Harness; server: RunningServer; lines: () => any[] }> {
  const h = await startHarness({ logLevel: "info", ...options });
  cleanups.push(() => h.close());
  const raw: string[] = [];
  const server = await startServer(h.service, { port: 0, logSink: (line) => raw.push(line) });
  cleanups.push(() => server.close());
  return { h, server, lines: () => raw.map((line) => JSON.parse(line)) };
}

/** A GET with an API key sent from the given local address (any of 127.0.0.0/8 reaches the server on Linux). */
function fromAddress(localAddress: string, url: string, key: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress, headers: { ...headers, authorization: `Bearer ${key}` } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end();
  });
}

const until = async (check: () => boolean, seen: () => unknown, ms = 2_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`condition not met in time; seen: ${JSON.stringify(seen())}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe("X-Request-Id", () => {
  it("is echoed when safe, replaced when not, and present on successes, errors, 404s, 405s and malformed URLs", async () => {
    const h = plain();
    const echoed = await h.call("/auth/test", { headers: { "x-request-id": "trace-123:abc.DEF_9" } });
    expect(echoed.headers.get("x-request-id")).toBe("trace-123:abc.DEF_9");

    for (const unsafe of ["a".repeat(129), "has space", "semi;colon", "<script>"]) {
      const res = await h.call("/auth/test", { headers: { "x-request-id": unsafe } });
      expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    }

    const base = h.server.url;
    const answers = await Promise.all([
      request(`${base}/api/v1/auth/test`),
      request(`${base}/api/v1/nowhere`),
      request(`${base}/api/v1/auth/test`, { method: "DELETE", key: h.tenant.key.key }),
      request(`${base}/api/v1/chatbots/%E0%A4%A`, { key: h.tenant.key.key }),
      request(`${base}/nowhere`),
      request(`${base}/healthz`),
    ]);
    expect(answers.map((a) => a.status)).toEqual([401, 404, 405, 400, 404, 200]);
    const ids = answers.map((a) => a.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(ids).size).toBe(ids.length);
    for (const a of answers.slice(0, 5)) expect(a.body).toMatchObject({ success: false, message: expect.any(String) });
  });
});

describe("GET /healthz", () => {
  it("answers without a key, carries no data, is not rate limited, and says 503 once the service is closed", async () => {
    const h = await startHarness({ rateLimit: { perIpPerMinute: 1 } });
    cleanups.push(() => h.close());
    for (let i = 0; i < 3; i++) {
      const res = await request(`${h.server.url}/healthz`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, data: { status: "ok" } });
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
    const head = await fetch(`${h.server.url}/healthz`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await request(`${h.api}/healthz`)).toMatchObject({ status: 404 });

    await h.service.close();
    const down = await request(`${h.server.url}/healthz`);
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ success: false, message: "Service unavailable" });
  });
});

describe("request limits", () => {
  it("413 for bodies over 1 MB, 400 for invalid JSON, 422 for deep JSON, 415-free JSON only: all in the envelope", async () => {
    const h = plain();
    const conversation = await openConversation(h);
    const path = `/chatbots/demo/conversations/${conversation}/messages`;
    const big = await h.call(path, { method: "POST", body: JSON.stringify({ message: "x".repeat(1024 * 1024 + 10) }), headers: { "content-type": "application/json" } });
    expect(big.status).toBe(413);
    expect(big.body.success).toBe(false);
    const invalid = await h.call(path, { method: "POST", body: "{nope", headers: { "content-type": "application/json" } });
    expect(invalid).toMatchObject({ status: 400, body: { success: false, message: "Invalid JSON body" } });
    const deep = await h.call(path, { method: "POST", body: `${"[".repeat(40)}${"]".repeat(40)}`, headers: { "content-type": "application/json" } });
    expect(deep.status).toBe(422);
    expect(deep.body.errors).toHaveProperty("body");
    const wrongTypes = await h.call("/webhooks", { json: { url: 42, events: "lead_captured", name: ["x"] } });
    expect(wrongTypes.status).toBe(422);
    expect(Object.keys(wrongTypes.body.errors)).toEqual(expect.arrayContaining(["url", "events"]));
  });

  it("keeps idle connections longer than a load balancer in front does, and says so in Keep-Alive", async () => {
    const h = plain();
    const server = await startServer(h.service, { port: 0 });
    cleanups.push(() => server.close());
    const headers = await new Promise<IncomingHttpHeaders>((resolve, reject) => {
      httpRequest(`${server.url}/healthz`, (res) => {
        res.resume();
        resolve(res.headers);
      })
        .on("error", reject)
        .end();
    });
    expect(headers.connection).toBe("keep-alive");
    // ALB's and nginx's upstream idle timeouts are 60 s: the server must not be the one to close first.
    expect(Number(/timeout=(\d+)/.exec(String(headers["keep-alive"]))?.[1])).toBeGreaterThan(60);
  });

  it("a client that never finishes its headers is cut off with 408 by the request timeout", async () => {
    const h = plain();
    const server = await startServer(h.service, { port: 0, requestTimeoutMs: 300 });
    cleanups.push(() => server.close());
    const started = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(server.port, "127.0.0.1", () => socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "));
      let data = "";
      socket.on("data", (chunk) => (data += chunk.toString()));
      socket.on("close", () => resolve(data));
      socket.on("error", reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

describe("structured logs", () => {
  it("one JSON line per request with method, route, status, duration, key prefix and request id; never the key or the body", async () => {
    const { h, server, lines } = await logged();
    const key = h.tenant.key.key;
    const secret = "my private question about invoices";
    const conversation = (await request(`${server.url}/api/v1/chatbots/demo/conversations`, { key, json: {} })).body.data.conversation_id;
    await request(`${server.url}/api/v1/chatbots/demo/conversations/${conversation}/messages?token=abc`, { key, json: { message: secret }, headers: { "x-request-id": "req-42" } });
    // A wrong key: its last character changed (to X, unless it was X: then the key would be right).
    await request(`${server.url}/api/v1/auth/test`, { key: `${key.slice(0, -1)}${key.endsWith("X") ? "Y" : "X"}` });
    await request(`${server.url}/healthz`);
    // Lines are written when each response finishes, so under load they can arrive in any order.
    await until(() => lines().some((l) => l.status === 401) && lines().some((l) => l.request_id === "req-42") && lines().some((l) => l.status === 201), lines);

    const all = lines();
    const text = JSON.stringify(all);
    expect(text).not.toContain(key);
    expect(text).not.toContain(key.slice(0, 20));
    expect(text).not.toContain(secret);
    expect(text).not.toContain("token=abc");
    const sent = all.find((l) => l.request_id === "req-42");
    expect(sent).toMatchObject({
      level: "info",
      msg: "request",
      method: "POST",
      route: "/api/v1/chatbots/:slug/conversations/:id/messages",
      path: `/api/v1/chatbots/demo/conversations/${conversation}/messages`,
      status: 200,
      ip: "127.0.0.1",
      key_prefix: key.slice(0, 15),
    });
    expect(sent.duration_ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(sent.time)).not.toBeNaN();
    expect(all.find((l) => l.status === 401)).toMatchObject({ key_prefix: null, error: { message: "Invalid API key" } });
    // Health probes are debug lines: absent at info.
    expect(all.some((l) => l.path === "/healthz")).toBe(false);
    expect(all).toHaveLength(3);
  });

  it("logs a model provider's failure reason (never sent to the client) at error level", async () => {
    const fake: FakeOpenAI = await startFakeOpenAI({ chat: "fail", failStatus: 503 });
    cleanups.push(() => fake.close());
    const { h, server, lines } = await logged({ chatModel: "openai:fake", openaiBaseUrl: fake.baseUrl, modelTimeoutMs: 2_000 });
    await ingestDocs(h.service);
    const conversation = await openConversation(h);
    const res = await request(`${server.url}/api/v1/chatbots/demo/conversations/${conversation}/messages`, { key: h.tenant.key.key, json: { message: "How do I install Widgetron?" } });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ success: false, message: "The model provider failed; retry once", conversation_id: conversation });
    await until(() => lines().length >= 1, lines);
    const [line] = lines();
    expect(line).toMatchObject({ level: "error", status: 500, request_id: res.headers.get("x-request-id"), error: { kind: "failed", model: "openai:fake", provider_status: 503 } });
    expect(line.error.reason).toEqual(expect.any(String));
    expect(line.error.reason.length).toBeGreaterThan(0);
    expect(res.text).not.toContain(line.error.reason);
  });

  it("logs unexpected errors with their stack; the level option silences lower levels", async () => {
    const h = await startHarness({ logLevel: "warn" });
    cleanups.push(() => h.close());
    const raw: string[] = [];
    const server = await startServer(h.service, { port: 0, logSink: (line) => raw.push(line) });
    cleanups.push(() => server.close());
    await request(`${server.url}/api/v1/auth/test`, { key: h.tenant.key.key });
    // Breaking the chatbots table makes the next read an unexpected error.
    await sqlOf(h.service).exec("ALTER TABLE chatbots RENAME TO chatbots_gone");
    const res = await request(`${server.url}/api/v1/chatbots`, { key: h.tenant.key.key });
    await sqlOf(h.service).exec("ALTER TABLE chatbots_gone RENAME TO chatbots");
    expect(res).toMatchObject({ status: 500, body: { success: false, message: "Internal server error" } });
    await until(() => raw.length >= 1, () => raw);
    const lines = raw.map((l) => JSON.parse(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "error", status: 500, route: "/api/v1/chatbots", request_id: res.headers.get("x-request-id") });
    expect(lines[0].error.stack).toContain("chatbots");
  });

  it("rejects an unknown log level in the configuration", async () => {
    const { createChatService } = await import("../../src/service.js");
    await expect(createChatService({ db: ":memory:", env: { CHATSVC_LOG_LEVEL: "loud" } })).rejects.toThrow(expect.objectContaining({ status: 422, errors: { logLevel: [expect.stringContaining("loud")] } }));
  });
});

describe("rate limits", () => {
  it("per key: 429 'Too many requests' with Retry-After and X-RateLimit-* headers, unlike the credit 429", async () => {
    const h = await startHarness({ rateLimit: { perKeyPerMinute: 3 } });
    cleanups.push(() => h.close());
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await h.call("/auth/test"));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(answers.map((a) => a.headers.get("x-ratelimit-remaining"))).toEqual(["2", "1", "0", "0"]);
    for (const a of answers) expect(a.headers.get("x-ratelimit-limit")).toBe("3");
    const refused = answers[3]!;
    expect(refused.body).toMatchObject({ success: false, message: expect.stringMatching(/^Too many requests/) });
    expect(refused.body.message).not.toContain("credit");
    expect(Number(refused.headers.get("retry-after"))).toBe(20);
    expect(Number(refused.headers.get("x-ratelimit-reset"))).toBeGreaterThan(50);
    expect(refused.headers.get("x-request-id")).toBeTruthy();

    // Another key of the same organisation has its own bucket.
    const other = await h.service.keys.create({ user_id: h.tenant.user.id, name: "second", accept_attribution: true });
    expect((await h.call("/auth/test", { key: other.key })).status).toBe(200);
  });

  it("per IP: applies with or without a key, to unknown routes too", async () => {
    const h = await startHarness({ rateLimit: { perIpPerMinute: 2 } });
    cleanups.push(() => h.close());
    expect((await h.call("/nowhere", { key: null })).status).toBe(404);
    expect((await h.call("/auth/test")).status).toBe(200);
    const refused = await h.call("/auth/test");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(refused.headers.get("x-ratelimit-limit")).toBe("2");
  });

  it("a burst of random well-formed keys from one IP does not lock out a valid key from that IP", async () => {
    const h = await startHarness();
    cleanups.push(() => h.close());
    const burst = await Promise.all(Array.from({ length: 40 }, () => h.call("/auth/test", { key: generateApiKey() })));
    expect(burst.filter((a) => a.status === 429).length).toBeGreaterThan(0);
    const valid = await h.call("/auth/test");
    expect(valid.status).toBe(200);
    expect(valid.body.success).toBe(true);
  });

  it("failed authentication per IP: once spent, further bad keys get 429 with Retry-After while a valid key still passes", async () => {
    const h = await startHarness({ rateLimit: { failedAuthPerIpPerMinute: 3 } });
    cleanups.push(() => h.close());
    const wrong = () => h.call("/auth/test", { key: generateApiKey() });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await wrong()).status);
    expect(statuses).toEqual([401, 401, 401]);
    const blocked = await wrong();
    expect(blocked.status).toBe(429);
    expect(blocked.body).toMatchObject({ success: false, message: "Too many failed authentication attempts; try again in 20 s" });
    expect(blocked.headers.get("retry-after")).toBe("20");
    // Neither a missing key nor a malformed one gets more than the budget.
    expect((await h.call("/auth/test", { key: null })).status).toBe(429);
    expect((await h.call("/auth/test", { key: "nonsense" })).status).toBe(429);

    for (let i = 0; i < 3; i++) expect((await h.call("/auth/test")).status).toBe(200);
    expect((await wrong()).status).toBe(429);
    // Requests needing no key are not authentication attempts.
    expect((await request(`${h.server.url}/healthz`)).status).toBe(200);
  });

  it("failed authentication per key prefix: guessing one key's prefix from several IPs is throttled, the key itself still works", async () => {
    const h = await startHarness({ rateLimit: { failedAuthPerIpPerMinute: 3 } });
    cleanups.push(() => h.close());
    const url = `${h.api}/auth/test`;
    const key = h.tenant.key.key;
    const guess = () => `${key.slice(0, VISIBLE_PREFIX_LENGTH)}${generateApiKey().slice(VISIBLE_PREFIX_LENGTH)}`;
    const statuses = [];
    for (const from of ["127.0.0.2", "127.0.0.3", "127.0.0.4"]) statuses.push((await fromAddress(from, url, guess())).status);
    expect(statuses).toEqual([401, 401, 401]);
    // A fourth address with budget of its own: the prefix's budget is spent.
    const blocked = await fromAddress("127.0.0.5", url, guess());
    expect(blocked.status).toBe(429);
    expect(blocked.body.message).toBe("Too many failed authentication attempts; try again in 20 s");
    expect(blocked.headers["retry-after"]).toBe("20");
    // The same address with another prefix is only refused once its own budget is spent.
    expect((await fromAddress("127.0.0.5", url, generateApiKey())).status).toBe(401);
    // The key whose prefix was guessed still authenticates, from anywhere.
    expect((await fromAddress("127.0.0.5", url, key)).status).toBe(200);
    expect((await fromAddress("127.0.0.2", url, key)).status).toBe(200);
  });

  it("successful requests never spend the failed-authentication bucket", async () => {
    const h = await startHarness({ rateLimit: { failedAuthPerIpPerMinute: 1 } });
    cleanups.push(() => h.close());
    for (let i = 0; i < 5; i++) expect((await h.call("/auth/test")).status).toBe(200);
  });

  it("is off with rateLimit: false or CHATSVC_RATE_LIMIT=off", async () => {
    for (const options of [{ rateLimit: false as const }, { env: { CHATSVC_RATE_LIMIT: "off", CHATSVC_RATE_LIMIT_PER_KEY: "1" } }]) {
      const h = await startHarness(options);
      cleanups.push(() => h.close());
      const answers = await Promise.all(Array.from({ length: 5 }, () => h.call("/auth/test")));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
      expect(answers[0]!.headers.get("x-ratelimit-limit")).toBeNull();
    }
  });

  it("reads limits from the environment and refuses bad values", async () => {
    const h = await startHarness({ env: { CHATSVC_RATE_LIMIT_PER_KEY: "1" } });
    cleanups.push(() => h.close());
    expect(h.service.config.rateLimit).toEqual({ perKeyPerMinute: 1, perIpPerMinute: 600, failedAuthPerIpPerMinute: 30 });
    expect((await h.call("/auth/test")).status).toBe(200);
    expect((await h.call("/auth/test")).status).toBe(429);
    const { createChatService } = await import("../../src/service.js");
    await expect(createChatService({ db: ":memory:", env: { CHATSVC_RATE_LIMIT_PER_IP: "-5" } })).rejects.toThrow(
      expect.objectContaining({ status: 422, errors: { "rateLimit.perIpPerMinute": [expect.any(String)] } }),
    );
  });
});
