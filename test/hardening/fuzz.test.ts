import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRoutes } from "../../src/http/app.js";
import { allowedMethods } from "../../src/http/router.js";
import { startHarness, type ApiResponse, type Harness } from "../support/harness.js";
import { startReceiver, type Receiver } from "../webhooks/support/receiver.js";
import { checksum, seedTwoTenants, settleDeliveries, type TenantRecords } from "./support.js";
import { sqlOf } from "../support/sql.js";

/*
 * Property-based fuzzing of every route in `apiRoutes` (new routes are covered
 * automatically): generated path ids and slugs, query strings, headers, keys
 * and bodies. Whatever comes in: never a 5xx, always the envelope with a
 * request id, and a refused request changes no stored row.
 * CHATSVC_FUZZ_RUNS=<n> runs each property n times (default 15).
 */
const RUNS = Number(process.env.CHATSVC_FUZZ_RUNS) || 15;

let h: Harness;
let a: TenantRecords;
let b: TenantRecords;
let receiver: Receiver;

beforeAll(async () => {
  // Rate limits would answer 429 to the flood; they have their own tests.
  h = await startHarness({ rateLimit: false, webhooks: { allowPrivateNetworks: true } });
  receiver = await startReceiver();
  ({ a, b } = await seedTwoTenants(h, (t) => `${receiver.url}/${t}`));
  // Once the seeding's deliveries are done, inactive hooks queue no more: no background work changes rows between checksums.
  await settleDeliveries(h.service);
  await sqlOf(h.service).exec("UPDATE webhooks SET is_active = false");
}, 30_000);
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 });
const nasty = ["", " ", "..", ".", "%", "%00", "\u0000", "ＤＥＭＯ", "<script>alert(1)</script>", "' OR 1=1 --", "null", "undefined", "__proto__", "constructor", "a".repeat(300), "\ud800", "🙂"];

const idValue = () =>
  fc.oneof(
    fc.constantFrom(...[a, b].flatMap((t) => [t.conversationId, t.endedConversationId, t.leadId, t.webhookId, t.assistantMessageId, t.userMessageId]).map(String)),
    fc.integer().map(String),
    fc.constantFrom("0", "-1", "1e3", "0x10", "1.5", "99999999999999999999", "9007199254740993", " 1", "NaN", "Infinity", ...nasty),
    fc.string({ maxLength: 20 }),
  );
const slugValue = () => fc.oneof(fc.constantFrom(a.slug, b.slug), fc.constantFrom(...nasty), fc.string({ maxLength: 40 }));

const FIELDS = ["message", "role", "message_id", "rating", "name", "email", "phone", "company", "visitor_id", "visitor_name", "visitor_email", "visitor_phone", "metadata", "url", "events", "__proto__", "extra"];
const fieldValue = () =>
  fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.string({ unit: "binary", maxLength: 50 }),
    fc.constantFrom<unknown>("good", "bad", "user", "assistant", "lead_captured", a.assistantMessageId, b.assistantMessageId, 1e308, -0, 2 ** 53, "\ud800", "x".repeat(10_001), "🙂".repeat(10_000), "not-an-email", "javascript:alert(1)"),
  );
const bodyText = () =>
  fc.oneof(
    fc.dictionary(fc.constantFrom(...FIELDS), fieldValue(), { maxKeys: 6 }).map((o) => JSON.stringify(o)),
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 80 }),
    fc.constantFrom("", "{", "[]", "null", "true", '"text"', '{"a":1,"a":2}', "\ufeff{}", '{"__proto__":{"admin":true},"message":"hi"}', `${"[".repeat(40)}${"]".repeat(40)}`, '{"message":"\\ud800"}'),
  );

const keyChoice = fc.constantFrom("a", "b", "none", "garbage", "malformed", "a-x-api-key", "b-x-api-key");
const headerValues = {
  "content-type": fc.oneof(fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=utf-16"), printable),
  accept: fc.oneof(fc.constantFrom("application/json", "text/event-stream", "*/*", "text/html"), printable),
  "x-request-id": printable,
  "x-forwarded-for": printable,
  "cf-ipcountry": printable,
  referer: printable,
  origin: printable,
};
const headers = fc.record(
  Object.fromEntries(Object.entries(headerValues).map(([name, arb]) => [name, fc.option(arb, { nil: undefined })])) as Record<string, fc.Arbitrary<string | undefined>>,
);
const query = fc.oneof(
  fc.dictionary(fc.constantFrom("page", "per_page", "chatbot", "since", "until", "status", "rating", "q", "x"), fc.string({ maxLength: 30 }), { maxKeys: 4 }).map((q) => new URLSearchParams(q).toString()),
  fc.constantFrom("page=%ZZ", "page=1&page=2", "per_page=-1", "per_page=1000000", "since=2025-13-45", "status=ended&chatbot=" + "x".repeat(500)),
);

function keyHeaders(choice: string): Record<string, string> {
  switch (choice) {
    case "a":
      return { authorization: `Bearer ${a.key}` };
    case "b":
      return { authorization: `Bearer ${b.key}` };
    case "a-x-api-key":
      return { "x-api-key": a.key };
    case "b-x-api-key":
      return { "x-api-key": b.key };
    case "garbage":
      return { authorization: "Bearer sk_live_" + "Q".repeat(32) };
    case "malformed":
      return { authorization: "Basic dXNlcjpwYXNz" };
    default:
      return {};
  }
}

function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/:(\w+)/g, (_m, name: string) => encodeSegment(values[name] ?? "1"));
}

/** encodeURIComponent, except that lone surrogates become their (invalid) UTF-8 bytes instead of throwing. */
function encodeSegment(value: string): string {
  return [...value]
    .map((ch) => {
      const unit = ch.charCodeAt(0);
      if (ch.length === 1 && unit >= 0xd800 && unit <= 0xdfff) return `%${(0xe0 | (unit >> 12)).toString(16)}%${(0x80 | ((unit >> 6) & 0x3f)).toString(16)}%${(0x80 | (unit & 0x3f)).toString(16)}`.toUpperCase();
      return encodeURIComponent(ch);
    })
    .join("");
}

async function send(method: string, path: string, q: string, key: string, extra: Record<string, string | undefined>, body: string | undefined): Promise<ApiResponse> {
  const h2: Record<string, string> = { ...keyHeaders(key) };
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) h2[name] = value;
  const res = await fetch(`${h.api}${path}${q ? `?${q}` : ""}`, { method, headers: h2, ...(body !== undefined && method !== "GET" && method !== "HEAD" && { body }) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/*
 * The digest of the stored rows, as the last refused request left them (it was checked
 * unchanged then): the next request's "before". Reading every table twice per request was
 * most of a run on PostgreSQL; a request that may have changed rows forgets it.
 */
let known: string | undefined;

async function before(): Promise<string> {
  const digest = known ?? (await checksum(h.service));
  known = undefined;
  return digest;
}

/** What every answer must be, and what a refused one must not have done. */
async function checkAnswer(res: ApiResponse, before: string, what: string, { open = false, download = {} }: { open?: boolean; download?: Record<string, string> } = {}): Promise<void> {
  const context = `${what} -> ${res.status} ${res.text.slice(0, 300)}`;
  expect(res.status, context).toBeLessThan(500);
  expect(res.headers.get("x-request-id"), context).toMatch(/^[\x21-\x7e]{1,128}$/);
  if (res.status === 200 && res.headers.get("content-type")?.startsWith("text/event-stream")) return;
  // Exports answer a file of a documented media type (their refusals are envelopes).
  if (res.status === 200 && Object.keys(download).includes(res.headers.get("content-type")?.split(";")[0] ?? "")) return;
  // Routes needing no key (the API's own description) answer documents, not envelopes; their errors are envelopes.
  if (open && res.status < 400) return;
  expect(res.headers.get("content-type"), context).toMatch(/^application\/json/);
  expect(res.body, context).toEqual(expect.objectContaining({ success: res.status < 400 }));
  if (res.status >= 400) {
    expect(typeof res.body.message, context).toBe("string");
    if (res.status === 422) {
      expect(Object.keys(res.body.errors).length, context).toBeGreaterThan(0);
      for (const messages of Object.values(res.body.errors)) expect(messages, context).toEqual(expect.arrayContaining([expect.any(String)]));
    }
    expect((await checksum(h.service)), `${context}: a refused request changed stored data`).toBe(before);
    known = before;
  }
}

describe("fuzzing every API route", () => {
  it("covers every route", () => {
    expect(apiRoutes.length).toBeGreaterThanOrEqual(20);
  });

  for (const route of apiRoutes) {
    it(`${route.method} ${route.path}`, async () => {
      const params = Object.fromEntries([...route.path.matchAll(/:(\w+)/g)].map(([, name]) => [name!, name === "slug" ? slugValue() : idValue()]));
      await fc.assert(
        fc.asyncProperty(fc.record(params), query, keyChoice, headers, fc.option(bodyText(), { nil: undefined }), async (values, q, key, extra, body) => {
          const path = fillPath(route.path, values as Record<string, string>);
          const unchanged = await before();
          const res = await send(route.method, path, q, key, extra, body);
          await checkAnswer(res, unchanged, `${route.method} ${path}?${q} key=${key} body=${body?.slice(0, 200)}`, { open: route.auth === false, ...(route.response.download && { download: route.response.download }) });
        }),
        { numRuns: RUNS },
      );
    }, 60_000); // Completion, not speed: the first route also pays for the first connection and lazy loads, slow on a busy machine.
  }

  it("wrong methods on every route's path: 405 or 404 in the envelope, nothing changed", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...apiRoutes), fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"), keyChoice, async (route, method, key) => {
        if (apiRoutes.some((r) => r.path === route.path && r.method === method)) return;
        const path = fillPath(route.path, { slug: a.slug, id: String(a.conversationId), message_id: String(a.assistantMessageId) });
        // A fixed path can also be a value of another route's parameter (`PUT /leads/export` is `PUT /leads/:id`): a route of its own, not a wrong method.
        if (allowedMethods(apiRoutes, path).includes(method as never)) return;
        const unchanged = await before();
        const res = await send(method, path, "", key, {}, "{}");
        await checkAnswer(res, unchanged, `${method} ${path}`);
        expect([404, 405]).toContain(res.status);
        if (res.status === 405) expect(res.headers.get("allow")).toBeTruthy();
      }),
      { numRuns: RUNS * 2 },
    );
  });
});
