import { describe, expect, it } from "vitest";
import { verifyWebhook } from "../../src/index.js";
import { generateWebhookSecret, signWebhook } from "../../src/webhooks/signing.js";

const body = JSON.stringify({ event: "lead_captured", data: { id: 1, name: "Ada" } });

function headersFor(secret: string, id = "msg_1", timestamp = Math.floor(Date.now() / 1000)) {
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signWebhook(secret, id, timestamp, body) };
}

describe("Standard Webhooks signatures", () => {
  it("secrets are whsec_ + base64 of 32 random bytes", () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  it("matches the Standard Webhooks reference vector", () => {
    // From the standard-webhooks test suite (libraries/javascript/src/index.test.ts).
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const payload = '{"test": 2432232314}';
    expect(signWebhook(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, payload)).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("verifies a genuine request, from plain records, Node headers and fetch Headers", () => {
    const secret = generateWebhookSecret();
    const headers = headersFor(secret);
    expect(verifyWebhook(secret, headers, body)).toBe(true);
    expect(verifyWebhook(secret, new Headers(headers), Buffer.from(body))).toBe(true);
    expect(verifyWebhook(secret, { "Webhook-Id": headers["webhook-id"], "Webhook-Timestamp": headers["webhook-timestamp"], "Webhook-Signature": headers["webhook-signature"] }, body)).toBe(true);
  });

  it("rejects a changed body, another secret, another id, missing headers", () => {
    const secret = generateWebhookSecret();
    const headers = headersFor(secret);
    expect(verifyWebhook(secret, headers, body.replace("Ada", "Eve"))).toBe(false);
    expect(verifyWebhook(generateWebhookSecret(), headers, body)).toBe(false);
    expect(verifyWebhook(secret, { ...headers, "webhook-id": "msg_2" }, body)).toBe(false);
    expect(verifyWebhook(secret, { ...headers, "webhook-signature": undefined }, body)).toBe(false);
    expect(verifyWebhook(secret, { ...headers, "webhook-signature": "v1,short" }, body)).toBe(false);
  });

  it("rejects a stale or future timestamp (replays), within a configurable tolerance", () => {
    const secret = generateWebhookSecret();
    const old = headersFor(secret, "msg_1", Math.floor(Date.now() / 1000) - 600);
    expect(verifyWebhook(secret, old, body)).toBe(false);
    expect(verifyWebhook(secret, old, body, { toleranceSeconds: 900 })).toBe(true);
    expect(verifyWebhook(secret, headersFor(secret, "msg_1", Math.floor(Date.now() / 1000) + 600), body)).toBe(false);
  });

  it("accepts any matching signature of several (secret rotation)", () => {
    const secret = generateWebhookSecret();
    const headers = headersFor(secret);
    const rotated = { ...headers, "webhook-signature": `v1,${Buffer.alloc(32).toString("base64")} ${headers["webhook-signature"]}` };
    expect(verifyWebhook(secret, rotated, body)).toBe(true);
  });
});
