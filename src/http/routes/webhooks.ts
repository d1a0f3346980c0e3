import type { RegisterWebhookInput, Webhook } from "../../webhooks/index.js";
import { ok } from "../envelope.js";
import { pathId, type RouteDefinition } from "../router.js";

/** The spec's webhook object: no owner id, no secret. */
const toListed = (w: Webhook) => ({
  id: w.id,
  name: w.name,
  url: w.url,
  events: w.events,
  is_active: w.is_active,
  total_triggers: w.total_triggers,
  failed_triggers: w.failed_triggers,
  last_triggered_at: w.last_triggered_at,
  created_at: w.created_at,
});

export const webhookRoutes: RouteDefinition[] = [
  {
    method: "GET",
    path: "/webhooks",
    summary: "List webhooks with delivery statistics",
    handler: ({ service, principal }) => ok(service.webhooks.list(principal.organizationId).map(toListed)),
  },
  {
    method: "POST",
    path: "/webhooks",
    summary: "Register a webhook (the same URL updates it)",
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
    summary: "Delete a webhook",
    handler: ({ service, principal, params }) => {
      const id = pathId(params.id, "Webhook not found");
      service.webhooks.delete(principal.organizationId, id);
      return ok({ id }, { message: "Webhook deleted successfully" });
    },
  },
];
