import { afterEach, describe, expect, it } from "vitest";
import { resolveConfig, type ChatServiceOptions } from "../../src/core/config.js";
import { generateApiKey } from "../../src/core/keys.js";
import { createApiApp } from "../../src/http/app.js";
import { createChatService } from "../../src/service.js";
import { startHarness, type Harness } from "../support/harness.js";
import { widgetCall } from "../widget/support.js";

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function harness(options: ChatServiceOptions): Promise<Harness> {
  const h = await startHarness(options);
  cleanups.push(() => h.close());
  return h;
}

/** The visitor IP the service recorded for a conversation opened through the API with this `X-Forwarded-For`. */
async function recordedIp(h: Harness, forwardedFor?: string): Promise<string | null> {
  const headers = forwardedFor === undefined ? undefined : { "x-forwarded-for": forwardedFor };
  const opened = await h.call("/chatbots/demo/conversations", { json: {}, headers });
  expect(opened.status).toBe(201);
  const record = await h.call(`/conversations/${opened.body.data.conversation_id}`);
  return record.body.data.visitor.ip;
}

describe("client IP behind trusted proxies", () => {
  it("one hop (trustProxy: true): the rightmost X-Forwarded-For entry, never the client-written leftmost", async () => {
    const h = await harness({ trustProxy: true });
    expect(await recordedIp(h, "6.6.6.6, 1.2.3.4")).toBe("1.2.3.4");
    expect(await recordedIp(h, "1.2.3.4")).toBe("1.2.3.4");
    // No header: the proxy itself is the client.
    expect(await recordedIp(h)).toBe("127.0.0.1");
  });

  it("a number of hops skips that many proxies from the right", async () => {
    const h = await harness({ trustProxy: 2 });
    expect(await recordedIp(h, "6.6.6.6, 1.2.3.4, 10.0.0.9")).toBe("1.2.3.4");
  });

  it("a list of addresses and CIDRs skips every trusted hop from the right, and stops at the first untrusted one", async () => {
    const h = await harness({ trustProxy: ["127.0.0.1", "10.0.0.0/8"] });
    expect(await recordedIp(h, "6.6.6.6, 1.2.3.4, 10.1.2.3, 10.0.0.1")).toBe("1.2.3.4");
    // 10.0.0.1 is trusted, 192.0.2.9 is not: whatever it claims (10.9.9.9, 6.6.6.6) is its own say-so.
    expect(await recordedIp(h, "6.6.6.6, 10.9.9.9, 192.0.2.9, 10.0.0.1")).toBe("192.0.2.9");
  });

  it("reads the list (with named ranges such as loopback, uniquelocal) and hop counts from CHATSVC_TRUST_PROXY", async () => {
    const h = await harness({ env: { CHATSVC_TRUST_PROXY: "loopback, uniquelocal" } });
    expect(await recordedIp(h, "6.6.6.6, 1.2.3.4, 192.168.1.1, 172.16.0.4")).toBe("1.2.3.4");
    const trustProxyOf = (value: string) => resolveConfig({ env: { CHATSVC_TRUST_PROXY: value } }).trustProxy;
    expect(trustProxyOf("10.0.0.0/8, 192.0.2.1")).toEqual(["10.0.0.0/8", "192.0.2.1"]);
    expect(trustProxyOf("2")).toBe(2);
    for (const one of ["1", "true"]) expect(trustProxyOf(one)).toBe(1);
    for (const off of ["0", "false", ""]) expect(trustProxyOf(off)).toBe(false);
  });

  it("an untrusted socket peer's X-Forwarded-For is ignored entirely", async () => {
    const h = await harness({ trustProxy: ["10.0.0.0/8"] });
    expect(await recordedIp(h, "1.2.3.4")).toBe("127.0.0.1");
    const off = await harness({});
    expect(await recordedIp(off, "1.2.3.4")).toBe("127.0.0.1");
  });

  it("a request without a socket (app.request) has no IP, whatever it forwards", async () => {
    const service = await createChatService({ db: ":memory:", env: {}, renderWorker: false, trustProxy: true });
    cleanups.push(() => service.close());
    const { key } = await service.bootstrap({ organizationName: "Acme", email: "owner@acme.test" });
    const app = createApiApp(service);
    const headers = { authorization: `Bearer ${key.key}`, "content-type": "application/json", "x-forwarded-for": "6.6.6.6, 1.2.3.4" };
    const opened = await app.request("/chatbots/demo/conversations", { method: "POST", headers, body: "{}" });
    expect(opened.status).toBe(201);
    const id = (await opened.json()).data.conversation_id;
    const record = await (await app.request(`/conversations/${id}`, { headers })).json();
    expect(record.data.visitor.ip).toBeNull();
  });

  it("refuses nonsense with a 422 naming trustProxy", () => {
    for (const options of [
      { trustProxy: ["10.0.0.0/33"] },
      { trustProxy: ["not-an-address"] },
      { trustProxy: -1 },
      { trustProxy: 1.5 },
      { env: { CHATSVC_TRUST_PROXY: "10.0.0.0/8, banana" } },
      { env: { CHATSVC_TRUST_PROXY: "300.1.1.1" } },
    ] as ChatServiceOptions[]) {
      expect(() => resolveConfig({ env: {}, ...options })).toThrow(
        expect.objectContaining({ status: 422, errors: { trustProxy: [expect.stringContaining("trustProxy")] } }),
      );
    }
  });
});

describe("spoofed X-Forwarded-For entries escape no limit", () => {
  // What a client behind one proxy controls: everything left of the address the proxy appends.
  const spoofed = (i: number, client = "1.2.3.4") => `198.51.100.${i}, ${client}`;

  it("the failed-authentication limit counts the real client, and a forged victim IP does not lock the victim out", async () => {
    const h = await harness({ trustProxy: true, rateLimit: { failedAuthPerIpPerMinute: 3 } });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await h.call("/auth/test", { key: generateApiKey(), headers: { "x-forwarded-for": spoofed(i) } })).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    // The attacker wrote the victim's address leftmost; the victim, behind the same proxy, still gets its own budget.
    for (let i = 0; i < 4; i++) await h.call("/auth/test", { key: generateApiKey(), headers: { "x-forwarded-for": "203.0.113.5, 1.2.3.4" } });
    expect((await h.call("/auth/test", { key: generateApiKey(), headers: { "x-forwarded-for": "203.0.113.5" } })).status).toBe(401);
  });

  it("the widget's per-IP limit counts the real client", async () => {
    const h = await harness({ trustProxy: true, widget: { ipRatePerMinute: 3 } });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await widgetCall(h, "/widget/demo/config", { headers: { "x-forwarded-for": spoofed(i) } })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await widgetCall(h, "/widget/demo/config", { headers: { "x-forwarded-for": spoofed(9, "5.6.7.8") } })).status).toBe(200);
  });
});
