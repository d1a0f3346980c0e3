import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { H3 } from "h3";
import { toNodeHandler } from "h3/node";
import { afterEach, describe, expect, it } from "vitest";
import { createApiApp } from "../../src/h3.js";
import { startHarness, type Harness } from "../support/harness.js";
import { checksum } from "./support.js";

/*
 * Requests fetch() cannot send: paths it would normalise, bodies with raw bytes.
 * They go over real sockets with node:http's request({path}) or a bare TCP socket.
 */

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function harness(): Promise<Harness> {
  const h = await startHarness();
  cleanups.push(() => h.close());
  return h;
}

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** Sends `path` exactly as written (node:http does not normalise it), with an optional raw body. */
function raw(base: string, path: string, { method = "GET", headers = {}, body }: { method?: string; headers?: Record<string, string>; body?: Buffer } = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method, headers: { ...headers, ...(body && { "content-length": String(body.length) }) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // Not JSON: keep the text.
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** One request written byte for byte on a TCP socket; resolves with the status line and body. */
function rawSocket(base: string, head: string): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(head));
    const chunks: Buffer[] = [];
    socket.on("data", (c) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const [headers = "", body = ""] = text.split("\r\n\r\n");
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        // Not JSON: keep the text.
      }
      resolve({ status: Number(headers.split(" ")[1]), body: parsed });
    });
  });
}

const DOT_PATHS = [
  "/widget/x/%2e%2e/%2e%2e/api/v1/auth/test",
  "/widget/x/../../api/v1/auth/test",
  "/widget/x/%2E%2E/.%2e/api/v1/auth/test",
  "/%2e%2e/api/v1/auth/test",
  "/api/v1/./auth/test",
  "/api/v1/%2e/auth/test",
  "/api/v1/chatbots/%2e%2e/auth/test",
  "/api/v1\\..\\api/v1/auth/test",
  "/widget/demo/config/..",
  "/widget/demo/./config?x=1",
];

describe("dot segments in the request path", () => {
  it("are refused with 400 in the envelope on every path of the server, before any route runs", async () => {
    const h = await harness();
    const key = { authorization: `Bearer ${h.tenant.key.key}`, origin: h.server.url };
    for (const path of DOT_PATHS) {
      const res = await raw(h.server.url, path, { headers: key });
      expect(res.status, path).toBe(400);
      expect(res.body, path).toEqual({ success: false, message: "The request path must not contain . or .. segments" });
      expect(res.headers["x-request-id"], path).toMatch(/^[0-9a-f-]{36}$/);
    }
    // The absolute form of a request target is resolved the same way.
    const absolute = await rawSocket(h.server.url, `GET ${h.server.url}/widget/x/%2e%2e/%2e%2e/api/v1/auth/test HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${h.tenant.key.key}\r\nConnection: close\r\n\r\n`);
    expect(absolute.status).toBe(400);
  });

  it("leaves dots that are not whole segments, and dots in the query, alone", async () => {
    const h = await harness();
    const key = { authorization: `Bearer ${h.tenant.key.key}` };
    expect((await raw(h.server.url, "/widget.js")).status).toBe(200);
    expect((await raw(h.server.url, "/api/v1/auth/test?next=../../x", { headers: key })).status).toBe(200);
    expect((await raw(h.server.url, "/api/v1/chatbots/...", { headers: key })).status).toBe(403);
    expect((await raw(h.server.url, "/api/v1/chatbots/a..b", { headers: key })).status).toBe(403);
  });

  it("are refused by the API app mounted in another app too", async () => {
    const h = await harness();
    const app = new H3().mount("/api/v1", createApiApp(h.service, { logSink: () => {} }));
    const server: Server = createServer(toNodeHandler(app));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const key = { authorization: `Bearer ${h.tenant.key.key}` };
    expect((await raw(base, "/api/v1/auth/test", { headers: key })).status).toBe(200);
    const res = await raw(base, "/api/v1/chatbots/%2e%2e/auth/test", { headers: key });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, message: "The request path must not contain . or .. segments" });
  });
});

describe("request bodies that are not clean text", () => {
  const json = (h: Harness) => ({ authorization: `Bearer ${h.tenant.key.key}`, "content-type": "application/json" });
  const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : Buffer.from(p))));

  it("invalid UTF-8 is refused with 400 on the API and the widget, and nothing is stored", async () => {
    const h = await harness();
    const conversation = (await raw(h.server.url, "/api/v1/chatbots/demo/conversations", { method: "POST", headers: json(h), body: Buffer.from("{}") })).body.data.conversation_id;
    const widget = await raw(h.server.url, "/widget/demo/conversations", { method: "POST", headers: { origin: h.server.url, "content-type": "application/json" }, body: Buffer.from("{}") });
    const before = (await checksum(h.service));
    const invalid = [
      [0xff], // never valid in UTF-8
      [0xc3], // a truncated two-byte sequence
      [0xc0, 0xaf], // an overlong '/'
      [0xed, 0xa0, 0x80], // an encoded surrogate half
      [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
    ];
    for (const sequence of invalid) {
      const body = bytes('{"message":"hello ', sequence, ' there"}');
      const api = await raw(h.server.url, `/api/v1/chatbots/demo/conversations/${conversation}/messages`, { method: "POST", headers: json(h), body });
      expect([api.status, api.body], String(sequence)).toEqual([400, { success: false, message: "Invalid UTF-8 in request body" }]);
      const visitor = await raw(h.server.url, `/widget/demo/conversations/${widget.body.data.conversation_id}/messages`, {
        method: "POST",
        headers: { origin: h.server.url, "content-type": "application/json", "x-widget-token": widget.body.data.token },
        body,
      });
      expect([visitor.status, visitor.body], String(sequence)).toEqual([400, { success: false, message: "Invalid UTF-8 in request body" }]);
    }
    const invalidName = await raw(h.server.url, "/api/v1/chatbots/demo/conversations", { method: "POST", headers: json(h), body: bytes('{"visitor_name":"Jos', [0xe9], '"}') });
    expect(invalidName.status).toBe(400);
    expect((await checksum(h.service))).toBe(before);

    // Valid multi-byte text passes through unchanged.
    const fine = await raw(h.server.url, `/api/v1/chatbots/demo/conversations/${conversation}/messages`, { method: "POST", headers: json(h), body: bytes('{"message":"Olá, ação 🙂 — how do I install?"}') });
    expect(fine.status).toBe(200);
    const history = await raw(h.server.url, `/api/v1/chatbots/demo/conversations/${conversation}`, { headers: json(h) });
    expect(history.body.data.messages[0].content).toBe("Olá, ação 🙂 — how do I install?");
  });

  it("NUL characters in text fields are refused with 422 naming the field, and nothing is stored", async () => {
    const h = await harness();
    const conversation = (await raw(h.server.url, "/api/v1/chatbots/demo/conversations", { method: "POST", headers: json(h), body: Buffer.from("{}") })).body.data.conversation_id;
    const before = (await checksum(h.service));
    const cases: [string, string, string, string][] = [
      ["POST", `/api/v1/chatbots/demo/conversations/${conversation}/messages`, '{"message":"a\\u0000b"}', "message"],
      ["POST", "/api/v1/chatbots/demo/conversations", '{"visitor_name":"Ana\\u0000"}', "visitor_name"],
      ["POST", "/api/v1/chatbots/demo/conversations", '{"visitor_id":"\\u0000"}', "visitor_id"],
      ["POST", "/api/v1/chatbots/demo/conversations", '{"metadata":{"plan":{"tier":"pro\\u0000"}}}', "metadata"],
      ["POST", "/api/v1/chatbots/demo/conversations", '{"metadata":{"k\\u0000":1}}', "metadata"],
      ["POST", `/api/v1/conversations/${conversation}/messages`, '{"message":"operator\\u0000reply"}', "message"],
      ["POST", `/api/v1/chatbots/demo/conversations/${conversation}/leads`, '{"email":"ana@example.com","name":"A\\u0000na"}', "name"],
      ["POST", "/api/v1/webhooks", '{"url":"https://hooks.example.com/x","events":["lead_captured"],"name":"n\\u0000"}', "name"],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await raw(h.server.url, path, { method, headers: json(h), body: Buffer.from(body) });
      expect(res.status, `${path} ${body}`).toBe(422);
      expect(res.body.errors, `${path} ${body}`).toEqual({ [field]: [`The ${field.replace(/_/g, " ")} field must not contain NUL characters.`] });
    }
    expect((await checksum(h.service))).toBe(before);

    // The widget's page_url is analytics: a value that is not a clean URL is ignored rather than refused.
    const started = await raw(h.server.url, "/widget/demo/conversations", {
      method: "POST",
      headers: { origin: h.server.url, "content-type": "application/json" },
      body: Buffer.from('{"page_url":"https://shop.example/a\\u0000b"}'),
    });
    expect(started.status).toBe(201);
    const stored = await raw(h.server.url, `/api/v1/conversations/${started.body.data.conversation_id}`, { headers: json(h) });
    expect(stored.body.data.source_url).toBe(h.server.url);
  });
});
