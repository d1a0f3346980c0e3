import { z } from "zod";
import { overviewQuerySchema, sourcesQuerySchema, unansweredQuerySchema } from "../../analytics/index.js";
import { ok, okPage } from "../envelope.js";
import { analyticsOverviewSchema, pageLinksSchema, pageMetaSchema, questionGroupSchema, sourceStatsSchema } from "../schemas/index.js";
import type { RouteDefinition } from "../router.js";
import { listQuery } from "./conversations.js";

const SLUG_403 = { 403: "`chatbot` names no chatbot of your organisation" };

export const analyticsRoutes: RouteDefinition[] = [
  {
    method: "GET",
    path: "/analytics",
    operationId: "getAnalytics",
    tags: ["Analytics"],
    summary: "Counts per day or week: conversations, visitor messages, answered, cannot_answer, ratings, leads",
    description:
      "Default range: the last 30 UTC days up to now; a date-only `until` includes that whole day. Buckets are UTC days, or weeks from Monday; the first and last may reach outside the range, but only records inside it count. At most 366 buckets (else 422).",
    query: overviewQuerySchema,
    response: { data: analyticsOverviewSchema },
    errors: SLUG_403,
    handler: async ({ service, principal, query }) => ok(await service.analytics.overview(principal.organizationId, listQuery(query, ["chatbot", "since", "until", "interval"]))),
  },
  {
    method: "GET",
    path: "/analytics/unanswered",
    operationId: "listUnansweredQuestions",
    tags: ["Analytics"],
    summary: "Visitor questions the bot could not answer or whose reply was rated bad, near-duplicates grouped",
    description:
      "Questions are grouped when they have the same set of stemmed content words (case, punctuation, word order, stop words and plural or -ing/-ed endings ignored). Most asked first, then most recently asked. Same range rules and defaults as `GET /analytics`; paginated like `GET /leads`.",
    query: unansweredQuerySchema,
    response: { data: z.array(questionGroupSchema), meta: pageMetaSchema, links: pageLinksSchema },
    errors: SLUG_403,
    handler: async ({ event, service, principal, query }) =>
      okPage(await service.analytics.unanswered(principal.organizationId, listQuery(query, ["chatbot", "since", "until", "page", "per_page"])), event.url, service.config),
  },
  {
    method: "GET",
    path: "/analytics/sources",
    operationId: "listSourceCitations",
    tags: ["Analytics"],
    summary: "Knowledge-base documents by how often replies cited them, never-cited ones included",
    description: "All time. Most cited first; paginated like `GET /leads`.",
    query: sourcesQuerySchema,
    response: { data: z.array(sourceStatsSchema), meta: pageMetaSchema, links: pageLinksSchema },
    errors: SLUG_403,
    handler: async ({ event, service, principal, query }) =>
      okPage(await service.analytics.sources(principal.organizationId, listQuery(query, ["chatbot", "page", "per_page"])), event.url, service.config),
  },
];
