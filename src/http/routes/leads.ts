import { z } from "zod";
import { captureSchema, listSchema, updateSchema } from "../../core/leads.js";
import { capturedLeadSchema, leadDetailSchema, leadSchema, pageLinksSchema, pageMetaSchema } from "../schemas/index.js";
import { ok, okPage } from "../envelope.js";
import { idParam, slugParam, type RouteDefinition } from "../router.js";
import { listQuery, looseId } from "./conversations.js";

const ACCOUNT_LEAD = { 403: "The lead belongs to another organisation", 404: "The lead does not exist" };

export const leadRoutes: RouteDefinition[] = [
  {
    method: "POST",
    path: "/chatbots/:slug/conversations/:id/leads",
    operationId: "submitLead",
    idempotent: true,
    tags: ["Chatbots"],
    summary: "Submit a lead",
    description: "At least one of `name`, `email`, `phone` (else 422). The lead appears in `GET /leads`; fires `lead_captured`.",
    params: { slug: slugParam, id: idParam("Conversation") },
    body: captureSchema,
    response: { status: 201, data: capturedLeadSchema },
    errors: { 403: "The slug names no chatbot of your organisation", 404: "The conversation does not exist or belongs to another chatbot" },
    handler: async (ctx) => {
      const lead = await ctx.service.leads.capture(ctx.principal.organizationId, ctx.params.slug!, looseId(ctx.params.id), (await ctx.body()) as never);
      ctx.event.res.status = 201;
      return ok(lead);
    },
  },
  {
    method: "GET",
    path: "/leads",
    operationId: "listLeads",
    tags: ["Leads"],
    summary: "List leads, newest first",
    query: listSchema,
    response: { data: z.array(leadSchema), meta: pageMetaSchema, links: pageLinksSchema },
    handler: async ({ event, service, principal, query }) => {
      const page = await service.leads.list(principal.organizationId, listQuery(query, ["page", "per_page", "chatbot", "since", "until"]));
      return okPage(page, event.url, service.config);
    },
  },
  {
    method: "GET",
    path: "/leads/:id",
    operationId: "getLead",
    tags: ["Leads"],
    summary: "One lead with its conversation transcript",
    params: { id: idParam("Lead") },
    response: { data: leadDetailSchema },
    errors: ACCOUNT_LEAD,
    handler: async ({ service, principal, params }) => ok(await service.leads.get(principal.organizationId, looseId(params.id))),
  },
  {
    method: "PUT",
    path: "/leads/:id",
    operationId: "updateLead",
    tags: ["Leads"],
    summary: "Update a lead's name, email, phone, company or message",
    description: "A partial update: fields left out (or empty) keep their value; at least one is required.",
    params: { id: idParam("Lead") },
    body: updateSchema,
    response: { data: leadSchema },
    errors: ACCOUNT_LEAD,
    handler: async ({ service, principal, params, body }) => ok(await service.leads.update(principal.organizationId, looseId(params.id), (await body()) as never)),
  },
];
