import { getRequestIP, type H3Event } from "h3";
import type { VisitorContext } from "../../core/conversations.js";
import { pageLinks } from "../../core/pagination.js";
import type { ChatService } from "../../service.js";
import { ok } from "../envelope.js";
import type { RouteContext, RouteDefinition } from "../router.js";
import { streamReply, wantsEventStream } from "../sse.js";

/**
 * A path id as a number; a malformed one becomes 0, which names no record, so
 * the lookup answers its own 404 after the slug's 403 had its turn.
 */
export const looseId = (value: string | undefined): number => (value !== undefined && /^[1-9]\d{0,15}$/.test(value) && Number.isSafeInteger(Number(value)) ? Number(value) : 0);

/**
 * What the request tells about the visitor: the IP (from `X-Forwarded-For`
 * only behind a trusted proxy), a two-letter country from the configured
 * header, and the page the chat runs on from `Referer` (else `Origin`), when
 * it is an http(s) URL.
 */
export function visitorContext(event: H3Event, service: ChatService): VisitorContext {
  const headers = event.req.headers;
  const country = headers.get(service.config.countryHeader)?.trim().toUpperCase();
  const page = headers.get("referer") ?? headers.get("origin");
  return {
    ip: getRequestIP(event, { xForwardedFor: service.config.trustProxy }) ?? null,
    country: country && /^[A-Z0-9]{2}$/.test(country) ? country : null,
    sourceUrl: page && page.length <= 2048 && /^https?:\/\//i.test(page) && URL.canParse(page) ? page : null,
  };
}

/** List query parameters as the core's list methods take them (first value of each). */
export function listQuery(query: URLSearchParams, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = query.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}

const created = <T>(ctx: RouteContext, value: T) => {
  ctx.event.res.status = 201;
  return value;
};

export const conversationRoutes: RouteDefinition[] = [
  {
    method: "POST",
    path: "/chatbots/:slug/conversations",
    summary: "Start a conversation",
    handler: async (ctx) =>
      created(ctx, ok(ctx.service.conversations.start(ctx.principal.organizationId, ctx.params.slug!, (await ctx.body()) as never, visitorContext(ctx.event, ctx.service)))),
  },
  {
    method: "POST",
    path: "/chatbots/:slug/conversations/:id/messages",
    summary: "Send a visitor message and receive the AI reply (JSON, or Server-Sent Events with Accept: text/event-stream)",
    handler: async ({ event, service, principal, params, body }) => {
      const pending = service.chat.prepare(principal.organizationId, params.slug!, looseId(params.id), (await body()) as never);
      if (wantsEventStream(event)) return streamReply(event, pending);
      const { data, meta } = await pending.answer();
      return ok(data, { meta: { ...meta } });
    },
  },
  {
    method: "POST",
    path: "/chatbots/:slug/conversations/:id/messages/rate",
    summary: "Rate an assistant message",
    handler: async ({ service, principal, params, body }) =>
      ok(service.chat.rate(principal.organizationId, params.slug!, looseId(params.id), (await body()) as never)),
  },
  {
    method: "POST",
    path: "/chatbots/:slug/conversations/:id/messages/:message_id/regenerate",
    summary: "Replace the latest assistant reply with a new answer",
    handler: async ({ service, principal, params }) => {
      const { data, meta } = await service.chat.regenerate(principal.organizationId, params.slug!, looseId(params.id), looseId(params.message_id));
      return ok(data, { meta: { ...meta } });
    },
  },
  {
    method: "GET",
    path: "/chatbots/:slug/conversations/:id",
    summary: "Conversation history",
    handler: ({ service, principal, params }) => ok(service.conversations.history(principal.organizationId, params.slug!, looseId(params.id))),
  },
  {
    method: "POST",
    path: "/chatbots/:slug/conversations/:id/end",
    summary: "End a conversation (idempotent)",
    handler: ({ service, principal, params }) => ok(service.conversations.end(principal.organizationId, params.slug!, looseId(params.id))),
  },
  {
    method: "GET",
    path: "/conversations",
    summary: "List conversations, newest first (page, per_page, chatbot, since, until, status)",
    handler: ({ event, service, principal, query }) => {
      const page = service.conversations.list(principal.organizationId, listQuery(query, ["page", "per_page", "chatbot", "since", "until", "status"]));
      return ok(page.data, { meta: { ...page.meta }, links: { ...pageLinks(event.url, page.meta) } });
    },
  },
  {
    method: "GET",
    path: "/conversations/:id",
    summary: "One conversation with its messages",
    handler: ({ service, principal, params }) => ok(service.conversations.get(principal.organizationId, looseId(params.id))),
  },
  {
    method: "POST",
    path: "/conversations/:id/messages",
    summary: "Add a message to a conversation (no AI call)",
    handler: async (ctx) => created(ctx, ok(await ctx.service.chat.post(ctx.principal.organizationId, looseId(ctx.params.id), (await ctx.body()) as never))),
  },
  {
    method: "POST",
    path: "/conversations/:id/end",
    summary: "End a conversation (400 when already ended)",
    handler: ({ service, principal, params }) => ok(service.conversations.endById(principal.organizationId, looseId(params.id))),
  },
];
