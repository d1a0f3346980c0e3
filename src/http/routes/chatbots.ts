import { z } from "zod";
import { chatbotDetailSchema, chatbotListItemSchema, chatbotListMetaSchema, widgetBudgetResponseSchema } from "../schemas/index.js";
import { widgetBudgetSchema } from "../../core/widget-budgets.js";
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
  {
    method: "GET",
    path: "/chatbots/:slug/widget-budget",
    operationId: "getWidgetBudget",
    tags: ["Chatbots"],
    summary: "The chatbot's widget message budgets",
    description:
      "How many messages the widget (anonymous visitors, not API-key calls) may send: per visitor (client IP) per UTC day, and for the chatbot per UTC hour and day. " +
      "A spent budget answers the widget 429 with `Retry-After` until its period ends; its first refusal in a period fires `budget_exhausted`.",
    params: { slug: slugParam },
    response: { data: widgetBudgetResponseSchema },
    errors: { 403: "The slug names no chatbot of your organisation" },
    handler: async ({ service, principal, params }) => ok(await service.widgetBudgets.get(await service.chatbots.resolve(principal.organizationId, params.slug!))),
  },
  {
    method: "PUT",
    path: "/chatbots/:slug/widget-budget",
    operationId: "setWidgetBudget",
    tags: ["Chatbots"],
    summary: "Set the chatbot's widget message budgets",
    description: "Each field given replaces that limit: a number (0 for no limit), or null for the server's default. Fields left out stay as they are.",
    params: { slug: slugParam },
    body: widgetBudgetSchema,
    response: { data: widgetBudgetResponseSchema },
    errors: { 403: "The slug names no chatbot of your organisation" },
    handler: async ({ service, principal, params, body }) =>
      ok(await service.widgetBudgets.set(await service.chatbots.resolve(principal.organizationId, params.slug!), (await body()) as never)),
  },
];
