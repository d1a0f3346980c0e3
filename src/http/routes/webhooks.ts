import { z } from "zod";
import { deletedWebhookSchema, registeredWebhookSchema, webhookSchema, webhookTestSchema, type ListedWebhook } from "../schemas/index.js";
import type { RegisterWebhookInput, Webhook } from "../../webhooks/index.js";
import { registerSchema } from "../../webhooks/registry.js";
import { ok } from "../envelope.js";
import { idParam, pathId, type RouteDefinition } from "../router.js";

/** The spec's webhook object: no owner id, no secret. */
const toListed = (w: Webhook): ListedWebhook => ({
  id: w.id,
  name: w.name,
  url: w.url,
  events: w.events,
  is_active: w.is_active,
  total_triggers: w.total_triggers,
  failed_triggers: w.failed_triggers,
  last_triggered_at: w.last_triggered_at,
  last_failure: w.last_failure,
  created_at: w.created_at,
});

export const webhookRoutes: RouteDefinition[] = [
  {
    method: "GET",
    path: "/webhooks",
    operationId: "listWebhooks",
    tags: ["Webhooks"],
    summary: "List webhooks with delivery statistics",
    response: { data: z.array(webhookSchema) },
    handler: async ({ service, principal }) => ok((await service.webhooks.list(principal.organizationId)).map(toListed)),
  },
  {
    method: "POST",
    path: "/webhooks",
    operationId: "registerWebhook",
    idempotent: true,
    tags: ["Webhooks"],
    summary: "Register a webhook",
    description:
      "201 with the signing `secret` (shown only now) when the URL is new; registering a URL the organisation already has updates that webhook (200, no secret). " +
      "Deliveries are signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature` headers): verify them with `verifyWebhook` from the chatsvc package.",
    body: registerSchema,
    response: { status: [201, 200], data: registeredWebhookSchema, message: "Webhook registered successfully" },
    handler: async ({ event, service, principal, body }) => {
      const { created, webhook, secret } = await service.webhooks.register(principal.organizationId, (await body()) as RegisterWebhookInput);
      event.res.status = created ? 201 : 200;
      const data = { id: webhook.id, name: webhook.name, url: webhook.url, events: webhook.events, is_active: webhook.is_active };
      return ok(secret === undefined ? data : { ...data, secret }, { message: "Webhook registered successfully" });
    },
  },
  {
    method: "DELETE",
    path: "/webhooks/:id",
    operationId: "deleteWebhook",
    tags: ["Webhooks"],
    summary: "Delete a webhook",
    params: { id: idParam("Webhook") },
    response: { data: deletedWebhookSchema, message: "Webhook deleted successfully" },
    errors: { 403: "The webhook belongs to another organisation", 404: "The webhook does not exist" },
    handler: async ({ service, principal, params }) => {
      const id = pathId(params.id, "Webhook not found");
      await service.webhooks.delete(principal.organizationId, id);
      return ok({ id }, { message: "Webhook deleted successfully" });
    },
  },
  {
    method: "POST",
    path: "/webhooks/:id/test",
    operationId: "testWebhook",
    tags: ["Webhooks"],
    summary: "Send a test event to a webhook",
    description:
      "Delivers one `webhook_test` event (`{\"event\":\"webhook_test\",\"data\":{webhook_id, name, url, message, sent_at}}`), signed like every delivery (Standard Webhooks headers), " +
      "to the webhook now, active or not, and answers what came of it: one attempt, no retry, within the delivery timeout (10 s by default). " +
      "A failed delivery is still a 200 answer with `delivered: false`, the receiver's `status` and the `error`. The webhook's statistics are left alone.",
    params: { id: idParam("Webhook") },
    response: { data: webhookTestSchema },
    errors: { 403: "The webhook belongs to another organisation", 404: "The webhook does not exist" },
    handler: async ({ service, principal, params }) => ok(await service.webhooks.sendTest(principal.organizationId, pathId(params.id, "Webhook not found"))),
  },
];
