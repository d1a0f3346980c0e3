import { z } from "zod";
import { nowIso } from "../core/clock.js";
import { ChatsvcError } from "../core/errors.js";
import { EVENT_NAMES, type EventName } from "../core/events.js";
import type { WebhookRecord, WebhookStore } from "../core/storage/index.js";
import { body, oneOf, parse, text } from "../core/validation.js";
import { resolveAllowed, urlProblem, type AddressPolicy } from "../net/address-policy.js";
import { randomUUID } from "node:crypto";
import type { Sender } from "./deliver.js";
import { generateWebhookSecret, secretKey } from "./signing.js";

/** A webhook as `GET /webhooks` lists it, with its delivery statistics. */
export interface Webhook {
  id: number;
  organization_id: number;
  name: string;
  url: string;
  events: EventName[];
  is_active: boolean;
  /** Events sent to the hook (each counted once, on its first attempt). */
  total_triggers: number;
  /** Events whose last attempt failed. */
  failed_triggers: number;
  /** Time of the latest delivery attempt, or null. */
  last_triggered_at: string | null;
  /** The most recent failed attempt (kept after later successes; compare `at` with `last_triggered_at`), or null. */
  last_failure: WebhookFailure | null;
  created_at: string;
  updated_at: string;
}

/** Why an attempt failed: the receiver's HTTP status (null when none came) and what went wrong. */
export interface WebhookFailure {
  at: string;
  status: number | null;
  error: string;
}

export interface RegisterWebhookInput {
  /** http(s) URL; registering a URL the organisation already has updates that webhook. */
  url: string;
  /** Non-empty subset of the event names. */
  events: EventName[];
  /** Default: the URL's host. */
  name?: string | null;
}

export interface RegisteredWebhook {
  /** False when the URL was already registered and the call updated it. */
  created: boolean;
  webhook: Webhook;
  /** The signing secret, only when the webhook was created (it is never shown again). */
  secret?: string;
}

/** The event name of a test delivery: not subscribable, sent only on request. */
export const TEST_EVENT = "webhook_test";

/** What one test delivery came to: the receiver's status, or why none arrived. */
export interface WebhookTestOutcome {
  webhook_id: number;
  event: typeof TEST_EVENT;
  /** The `webhook-id` header the test was sent with. */
  message_id: string;
  /** True when the receiver answered 2xx within the delivery timeout. */
  delivered: boolean;
  /** The receiver's HTTP status, null when no answer came. */
  status: number | null;
  /** Why the delivery failed, null when it succeeded. */
  error: string | null;
  duration_ms: number;
}

/** How long registration waits for DNS before accepting the URL (delivery checks again anyway). */
const REGISTRATION_DNS_TIMEOUT_MS = 3_000;

/** Body of `POST /webhooks`. */
export const registerSchema = body({
  url: text("url", { min: 1, max: 2048 }),
  events: z
    .array(oneOf("events", EVENT_NAMES), { error: "The events field must be a list of event names." })
    .min(1, { message: `The events field must name at least one of: ${EVENT_NAMES.join(", ")}.` }),
  name: text("name", { min: 1, max: 200 }).nullish(),
});

function toWebhook(row: WebhookRecord): Webhook {
  return {
    id: row.id,
    organization_id: row.organization_id,
    name: row.name,
    url: row.url,
    events: parseEvents(row.events),
    is_active: row.is_active,
    total_triggers: row.total_triggers,
    failed_triggers: row.failed_triggers,
    last_triggered_at: row.last_triggered_at,
    last_failure: row.last_failure_at === null ? null : { at: row.last_failure_at, status: row.last_failure_status, error: row.last_failure_error ?? "" },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function parseEvents(raw: string): EventName[] {
  try {
    const value: unknown = JSON.parse(raw);
    return Array.isArray(value) ? value.filter((e): e is EventName => (EVENT_NAMES as readonly unknown[]).includes(e)) : [];
  } catch {
    return [];
  }
}

export type WebhookRegistry = ReturnType<typeof createWebhookRegistry>;

/**
 * Webhook records of each organisation: register (create or update by URL),
 * list, delete, and send a test event (through `sender`).
 *
 * @example
 * const registry = createWebhookRegistry(storage.webhooks, config.webhooks, sender);
 * const { webhook, secret } = await registry.register(orgId, { url: "https://example.com/hooks", events: ["lead_captured"] });
 */
export function createWebhookRegistry(store: WebhookStore, policy: AddressPolicy, sender: Pick<Sender, "send">) {
  /** The organisation's webhook row: 404 when it does not exist, 403 when another organisation owns it. */
  const owned = async (organizationId: number, id: number) => {
    const row = await store.find(id);
    if (!row) throw notFound();
    if (row.organization_id !== organizationId) throw forbidden();
    return row;
  };

  return {
    /**
     * Creates a webhook, or updates the organisation's webhook with the same
     * URL (its events, its name when given, and re-activates it). Refuses
     * (422 on `url`) addresses the network policy forbids.
     */
    async register(organizationId: number, input: RegisterWebhookInput): Promise<RegisteredWebhook> {
      const data = parse(registerSchema, input);
      const url = await checkUrl(data.url.trim(), policy);
      const secret = generateWebhookSecret();
      const registered = await store.register({
        organization_id: organizationId,
        url,
        events: EVENT_NAMES.filter((name) => data.events.includes(name)),
        name: data.name?.trim() || null,
        default_name: new URL(url).host,
        secret,
        now: nowIso(),
      });
      if (registered === "no-organization") throw ChatsvcError.notFound(`Organization ${organizationId} not found`);
      const webhook = toWebhook(registered.webhook);
      return registered.created ? { created: true, webhook, secret } : { created: false, webhook };
    },

    /** Webhooks of one organisation, or of all when no id is given, oldest first. */
    async list(organizationId?: number): Promise<Webhook[]> {
      return (await store.list(organizationId)).map(toWebhook);
    },

    /** One webhook of the organisation: 404 when it does not exist, 403 when another organisation owns it. */
    async get(organizationId: number, id: number): Promise<Webhook> {
      return toWebhook(await owned(organizationId, id));
    },

    /**
     * Sends one signed `webhook_test` event to the webhook now, active or not, and answers
     * what came of it. One attempt, no retry, bounded by the delivery timeout; the
     * webhook's statistics are left alone, since no event of the organisation was sent.
     * 404 when it does not exist, 403 when another organisation owns it.
     */
    async sendTest(organizationId: number, id: number): Promise<WebhookTestOutcome> {
      const row = await owned(organizationId, id);
      const messageId = `msg_test_${randomUUID().replace(/-/g, "")}`;
      const payload = JSON.stringify({
        event: TEST_EVENT,
        data: { webhook_id: row.id, name: row.name, url: row.url, message: "A test event sent from chatsvc: your endpoint received and can verify it.", sent_at: nowIso() },
      });
      const started = performance.now();
      const outcome = await sender.send({ url: row.url, key: secretKey(row.secret), messageId, payload });
      const duration_ms = Math.round(performance.now() - started);
      return {
        webhook_id: row.id,
        event: TEST_EVENT,
        message_id: messageId,
        delivered: outcome.ok,
        status: outcome.status,
        error: outcome.ok ? null : outcome.error,
        duration_ms,
      };
    },

    /** Deletes a webhook of the organisation with its pending deliveries (404 unknown, 403 another organisation's). */
    async delete(organizationId: number, id: number): Promise<void> {
      const outcome = await store.delete(id, organizationId);
      if (outcome === "missing") throw notFound();
      if (outcome === "forbidden") throw forbidden();
    },
  };
}

const notFound = () => ChatsvcError.notFound("Webhook not found");
const forbidden = () => ChatsvcError.forbidden("You do not have access to this webhook");

const ALLOW_ALL: AddressPolicy = { allowPrivateNetworks: true };

/**
 * How an operator lifts the refusal. It names the switches only: the addresses a
 * name resolved to stay out of the answer, so it cannot be used to map an internal network.
 */
const ALLOW_PRIVATE_HINT =
  "To deliver webhooks to private or local addresses, start the server with --allow-private-webhooks or CHATSVC_WEBHOOKS_ALLOW_PRIVATE=1 (library option webhooks.allowPrivateNetworks).";

/** The normalised URL, or a 422 on `url` when it is malformed or points where webhooks may not go. */
async function checkUrl(raw: string, policy: AddressPolicy): Promise<string> {
  const problem = urlProblem(raw, policy);
  // Only a refusal that allowing private networks would lift gets the hint; a bad scheme or IPv6 stays refused either way.
  if (problem) throw ChatsvcError.validation({ url: [urlProblem(raw, ALLOW_ALL) === null ? `${problem} ${ALLOW_PRIVATE_HINT}` : problem] });
  const url = new URL(raw);
  if (url.hash) url.hash = "";
  const host = url.hostname;
  if (!policy.allowPrivateNetworks && !/^[\d.]+$/.test(host)) {
    // A name that resolves only to refused addresses is refused now; a name that
    // does not resolve (yet) is accepted: delivery checks every connection again.
    let timer: NodeJS.Timeout | undefined;
    const refused = await Promise.race([
      resolveAllowed(host, policy).then(
        () => null,
        (error: NodeJS.ErrnoException) => (error.code === "EADDRNOTALLOWED" ? error.message : null),
      ),
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), REGISTRATION_DNS_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    if (refused) throw ChatsvcError.validation({ url: [`The url is not allowed: ${refused}. ${ALLOW_PRIVATE_HINT}`] });
  }
  return url.href;
}
