import { z } from "zod";
import { chatbotDetailSchema, chatbotListItemSchema, chatbotListMetaSchema } from "../schemas/index.js";
import { ok } from "../envelope.js";
import { slugParam, type RouteDefinition } from "../router.js";

export const chatbotRoutes: RouteDefinition[] = [
  {
    method: "GET",
    path: "/chatbots",
    operationId: "listChatbots",
    tags: ["Chatbots"],
    summary: "List the organisation's active chatbots",
    response: { data: z.array(chatbotListItemSchema), meta: chatbotListMetaSchema },
    handler: async ({ service, principal }) => {
      const bots = await service.chatbots.listActive(principal.organizationId);
      return ok(bots, { meta: { total: bots.length } });
    },
  },
  {
    method: "GET",
    path: "/chatbots/:slug",
    operationId: "getChatbot",
    tags: ["Chatbots"],
    summary: "Chatbot configuration",
    description: "Read it once at application start: names, greeting, placeholder, appearance and branding.",
    params: { slug: slugParam },
    response: { data: chatbotDetailSchema },
    errors: { 403: "The slug names no chatbot of your organisation" },
    handler: async ({ service, principal, params }) => ok(await service.chatbots.detail(await service.chatbots.resolve(principal.organizationId, params.slug!))),
  },
];
