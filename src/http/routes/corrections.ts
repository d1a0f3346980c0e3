import { z } from "zod";
import { correctMessageSchema, createCorrectionSchema, listCorrectionsSchema, updateCorrectionSchema } from "../../core/corrections.js";
import { correctionSchema, pageLinksSchema, pageMetaSchema } from "../schemas/index.js";
import { ok, okPage } from "../envelope.js";
import { idParam, slugParam, type RouteContext, type RouteDefinition } from "../router.js";
import { listQuery, looseId } from "./conversations.js";

const SLUG_403 = { 403: "The slug names no chatbot of your organisation" };
const CORRECTION_ERRORS = { ...SLUG_403, 404: "The correction does not exist or belongs to another chatbot" };
const correctionParams = { slug: slugParam, id: idParam("Correction") };

const created = <T>(ctx: RouteContext, value: T) => {
  ctx.event.res.status = 201;
  return value;
};

export const correctionRoutes: RouteDefinition[] = [
  {
    method: "GET",
    path: "/chatbots/:slug/corrections",
    operationId: "listCorrections",
    tags: ["Corrections"],
    summary: "List a chatbot's answer corrections, newest first",
    params: { slug: slugParam },
    query: listCorrectionsSchema,
    response: { data: z.array(correctionSchema), meta: pageMetaSchema, links: pageLinksSchema },
    errors: SLUG_403,
    handler: async ({ event, service, principal, params, query }) => {
      const page = await service.corrections.list(principal.organizationId, params.slug!, listQuery(query, ["page", "per_page"]));
      return okPage(page, event.url, service.config);
    },
  },
  {
    method: "POST",
    path: "/chatbots/:slug/corrections",
    operationId: "createCorrection",
    idempotent: true,
    tags: ["Corrections"],
    summary: "Add an answer correction",
    description:
      "From the next message on, a visitor question matching `question` (the same words, inflections or related words, in any order; see the README) is answered with `answer`: " +
      "rendered like any reply, charged like a message, with no model call and no retrieval, `sources` naming the correction.",
    params: { slug: slugParam },
    body: createCorrectionSchema,
    response: { status: 201, data: correctionSchema },
    errors: SLUG_403,
    handler: async (ctx) => created(ctx, ok(await ctx.service.corrections.create(ctx.principal.organizationId, ctx.params.slug!, (await ctx.body()) as never))),
  },
  {
    method: "PUT",
    path: "/chatbots/:slug/corrections/:id",
    operationId: "updateCorrection",
    tags: ["Corrections"],
    summary: "Update an answer correction",
    description: "A partial update: fields left out keep their value, `null` (or an empty string) clears `source_name` or `source_url`; at least one field is required.",
    params: correctionParams,
    body: updateCorrectionSchema,
    response: { data: correctionSchema },
    errors: CORRECTION_ERRORS,
    handler: async ({ service, principal, params, body }) =>
      ok(await service.corrections.update(principal.organizationId, params.slug!, looseId(params.id), (await body()) as never)),
  },
  {
    method: "DELETE",
    path: "/chatbots/:slug/corrections/:id",
    operationId: "deleteCorrection",
    tags: ["Corrections"],
    summary: "Delete an answer correction",
    params: correctionParams,
    response: { data: z.strictObject({ id: z.int() }), message: "Correction deleted successfully" },
    errors: CORRECTION_ERRORS,
    handler: async ({ service, principal, params }) => {
      const id = looseId(params.id);
      await service.corrections.delete(principal.organizationId, params.slug!, id);
      return ok({ id }, { message: "Correction deleted successfully" });
    },
  },
  {
    method: "POST",
    path: "/conversations/:id/messages/:message_id/correct",
    operationId: "correctMessage",
    idempotent: true,
    tags: ["Corrections"],
    summary: "Turn a reply into an answer correction",
    description:
      "Stores a correction of the conversation's chatbot whose question is the visitor message the reply answered and whose answer is `answer`, in one write. " +
      "The conversation keeps the reply as it was; later questions like it get the corrected answer.",
    params: { id: idParam("Conversation"), message_id: idParam("Assistant message") },
    body: correctMessageSchema,
    response: { status: 201, data: correctionSchema },
    errors: {
      403: "The conversation belongs to another organisation",
      404: "The conversation does not exist, or has no message `message_id`",
      400: "The message is the visitor's, or no visitor message precedes it",
    },
    handler: async (ctx) =>
      created(ctx, ok(await ctx.service.corrections.fromMessage(ctx.principal.organizationId, looseId(ctx.params.id), looseId(ctx.params.message_id), (await ctx.body()) as never))),
  },
];
