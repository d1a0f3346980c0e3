import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/*
 * Standard Webhooks (https://www.standardwebhooks.com): the secret is
 * `whsec_` + base64 of random bytes, the HMAC key is those bytes, and the
 * signed content is `${webhook-id}.${webhook-timestamp}.${body}`. Receivers can
 * use any Standard Webhooks library, or {@link verifyWebhook}.
 */

const SECRET_PREFIX = "whsec_";

/**
 * A new webhook secret: `whsec_` + base64 of 32 random bytes.
 *
 * @example
 * generateWebhookSecret(); // "whsec_Jx0z…="
 */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64");
}

/**
 * The HMAC key of a secret: the base64-decoded part after `whsec_`.
 *
 * @example
 * secretKey(generateWebhookSecret()).length; // 32
 */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
}

/**
 * The `webhook-signature` value for one delivery attempt: `v1,` + base64
 * HMAC-SHA256 of `id.timestamp.body`.
 *
 * @example
 * const signature = signWebhook(secret, "msg_123", Math.floor(Date.now() / 1000), body);
 */
export function signWebhook(secret: string | Buffer, id: string, timestamp: number, body: string | Uint8Array): string {
  const key = typeof secret === "string" ? secretKey(secret) : secret;
  const hmac = createHmac("sha256", key).update(`${id}.${timestamp}.`);
  return `v1,${hmac.update(body).digest("base64")}`;
}

/** Request headers as `Headers`, Node's `IncomingHttpHeaders` or a plain record. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, in seconds (replay protection). Default 300. */
  toleranceSeconds?: number;
  /** The current time in ms, for tests. Default `Date.now()`. */
  now?: number;
}

/**
 * Checks that a request really comes from chatsvc with this webhook's secret:
 * the `webhook-signature` matches `webhook-id`, `webhook-timestamp` and the
 * raw body, and the timestamp is recent. Pass the body exactly as received
 * (not re-serialised JSON).
 *
 * @example
 * import { verifyWebhook } from "chatsvc";
 * const body = await request.text();
 * if (!verifyWebhook(process.env.WEBHOOK_SECRET!, request.headers, body)) return new Response(null, { status: 401 });
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: string | Uint8Array,
  { toleranceSeconds = 300, now = Date.now() }: VerifyWebhookOptions = {},
): boolean {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures || !/^\d{1,15}$/.test(timestamp)) return false;
  if (Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, id, Number(timestamp), body).slice(3), "base64");
  // The header may carry several space-separated signatures (e.g. during secret rotation).
  return signatures.split(" ").some((entry) => {
    const [version, value] = entry.split(",", 2);
    if (version !== "v1" || !value) return false;
    const given = Buffer.from(value, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name] ?? Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}
