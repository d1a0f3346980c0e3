import { ok } from "../envelope.js";
import type { RouteDefinition } from "../router.js";

export const chatbotRoutes: RouteDefinition[] = [
  {
    method: "GET",
    path: "/chatbots",
    summary: "List the organisation's active chatbots",
    handler: ({ service, principal }) => {
      const bots = service.chatbots.listActive(principal.organizationId);
      return ok(bots, { meta: { total: bots.length } });
    },
  },
  {
    method: "GET",
    path: "/chatbots/:slug",
    summary: "Chatbot configuration",
    handler: ({ service, principal, params }) => ok(service.chatbots.detail(service.chatbots.resolve(principal.organizationId, params.slug!))),
  },
];
