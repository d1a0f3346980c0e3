import { z } from "zod";
import type { EventName } from "../../core/events.js";
import { eventNameSchema, integer, timestamp } from "./common.js";

/** A webhook as `GET /webhooks` lists it: no owner, no secret. */
export interface ListedWebhook {
  id: number;
  name: string;
  url: string;
  events: EventName[];
  is_active: boolean;
  total_triggers: number;
  failed_triggers: number;
  last_triggered_at: string | null;
  last_failure: { at: string; status: number | null; error: string } | null;
  created_at: string;
}

/** `POST /webhooks` data. */
export interface RegisteredWebhookData {
  id: number;
  name: string;
  url: string;
  events: EventName[];
  is_active: boolean;
  /** The signing secret, only when the call created the webhook. */
  secret?: string;
}

export const webhookSchema = z
  .strictObject({
    id: integer,
    name: z.string(),
    url: z.string(),
    events: z.array(eventNameSchema),
    is_active: z.boolean(),
    total_triggers: integer.meta({ description: "Events sent to the hook" }),
    failed_triggers: integer.meta({ description: "Events whose last delivery attempt failed" }),
    last_triggered_at: timestamp.nullable(),
    last_failure: z
      .strictObject({
        at: timestamp,
        status: integer.nullable().meta({ description: "The receiver's HTTP status; null when no answer came (connection, TLS or timeout)" }),
        error: z.string(),
      })
      .nullable()
      .meta({ description: "The most recent failed delivery attempt, kept after later successes" }),
    created_at: timestamp,
  })
  .meta({ id: "Webhook" }) satisfies z.ZodType<ListedWebhook>;

export const registeredWebhookSchema = z
  .strictObject({
    id: integer,
    name: z.string(),
    url: z.string(),
    events: z.array(eventNameSchema),
    is_active: z.boolean(),
    secret: z
      .string()
      .optional()
      .meta({ description: "Signing secret (`whsec_...`), only in the answer that created the webhook: store it to verify deliveries" }),
  })
  .meta({ id: "RegisteredWebhook" }) satisfies z.ZodType<RegisteredWebhookData>;

export const deletedWebhookSchema = z.strictObject({ id: integer });

/** `POST /webhooks/{id}/test` data. */
export interface WebhookTestData {
  webhook_id: number;
  event: "webhook_test";
  message_id: string;
  delivered: boolean;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

export const webhookTestSchema = z
  .strictObject({
    webhook_id: integer,
    event: z.literal("webhook_test"),
    message_id: z.string().meta({ description: "The `webhook-id` header the test event was signed and sent with" }),
    delivered: z.boolean().meta({ description: "True when the receiver answered 2xx within the delivery timeout" }),
    status: integer.nullable().meta({ description: "The receiver's HTTP status; null when no answer came (connection, TLS, address policy or timeout)" }),
    error: z.string().nullable().meta({ description: "Why the delivery failed; null when it was delivered" }),
    duration_ms: integer,
  })
  .meta({ id: "WebhookTest" }) satisfies z.ZodType<WebhookTestData>;
