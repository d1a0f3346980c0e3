import { pageLinks } from "../../core/pagination.js";
import { ok } from "../envelope.js";
import type { RouteDefinition } from "../router.js";
import { listQuery, looseId } from "./conversations.js";

export const leadRoutes: RouteDefinition[] = [
  {
    method: "POST",
    path: "/chatbots/:slug/conversations/:id/leads",
    summary: "Submit a lead (at least one of name, email, phone)",
    handler: async (ctx) => {
      const lead = ctx.service.leads.capture(ctx.principal.organizationId, ctx.params.slug!, looseId(ctx.params.id), (await ctx.body()) as never);
      ctx.event.res.status = 201;
      return ok(lead);
    },
  },
  {
    method: "GET",
    path: "/leads",
    summary: "List leads, newest first (page, per_page, chatbot, since, until)",
    handler: ({ event, service, principal, query }) => {
      const page = service.leads.list(principal.organizationId, listQuery(query, ["page", "per_page", "chatbot", "since", "until"]));
      return ok(page.data, { meta: { ...page.meta }, links: { ...pageLinks(event.url, page.meta) } });
    },
  },
  {
    method: "GET",
    path: "/leads/:id",
    summary: "One lead with its conversation transcript",
    handler: ({ service, principal, params }) => ok(service.leads.get(principal.organizationId, looseId(params.id))),
  },
  {
    method: "PUT",
    path: "/leads/:id",
    summary: "Update a lead's name, email, phone, company or message",
    handler: async ({ service, principal, params, body }) => ok(service.leads.update(principal.organizationId, looseId(params.id), (await body()) as never)),
  },
];
