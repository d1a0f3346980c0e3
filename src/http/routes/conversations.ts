import type { H3Event } from "h3";
import { z } from "zod";
import { postSchema, rateSchema, sendSchema } from "../../chat/chat.js";
import { handoffSchema, listSchema, startSchema, type VisitorContext } from "../../core/conversations.js";
import {
  conversationDetailSchema,
  conversationHistorySchema,
  conversationRecordSchema,
  creditMetaSchema,
  endedConversationSchema,
  handoffRequestedSchema,
  messageSchema,
  pageLinksSchema,
  pageMetaSchema,
  ratingSchema,
  replySchema,
  sendReplySchema,
  startedConversationSchema,
} from "../schemas/index.js";
import type { ChatService } from "../../service.js";
import { clientIp } from "../client-ip.js";
import { ok, okPage } from "../envelope.js";
import { idParam, slugParam, type RouteContext, type RouteDefinition } from "../router.js";
import { streamReply, wantsEventStream } from "../sse.js";

/**
 * A path id as a number; a malformed one becomes 0, which names no record, so
 * the lookup answers its own 404 after the slug's 403 had its turn.
 */
export const looseId = (value: string | undefined): number => (value !== undefined && /^[1-9]\d{0,15}$/.test(value) && Number.isSafeInteger(Number(value)) ? Number(value) : 0);

/**
 * What the request tells about the visitor: the IP (see {@link clientIp}),
 * a two-letter country from the configured header, and the page the chat
 * runs on from `Referer` (else `Origin`), when it is an http(s) URL.
 */
export function visitorContext(event: H3Event, service: ChatService): VisitorContext {
  const headers = event.req.headers;
  const country = headers.get(service.config.countryHeader)?.trim().toUpperCase();
  const page = headers.get("referer") ?? headers.get("origin");
  return {
    ip: clientIp(event, service.config) ?? null,
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

const SLUG_403 = { 403: "The slug names no chatbot of your organisation" };
const CONVERSATION_404 = { 404: "The conversation does not exist or belongs to another chatbot" };
const SEND_ERRORS = { ...SLUG_403, ...CONVERSATION_404, 400: "The conversation has ended", 429: "The organisation's monthly credits are used up" };
const chatbotConversation = { slug: slugParam, id: idParam("Conversation") };
const ACCOUNT_CONVERSATION = { 403: "The conversation belongs to another organisation", 404: "The conversation does not exist" };
const HUMAN_REPLY =
  " While a person handles the conversation (`status: \"human\"`, see `handOffConversation`) the message is only stored: `data` is a `HumanHandledReply` (`reply: null`, `handled_by: \"human\"`), " +
  "with no retrieval, no model call and no charge (`meta.this_message` 0); the person's reply arrives later as an `agent` message in history.";

export const conversationRoutes: RouteDefinition[] = [
  {
    method: "POST",
    path: "/chatbots/:slug/conversations",
    operationId: "startConversation",
    idempotent: true,
    tags: ["Chatbots"],
    summary: "Start a conversation",
    description: "Keep `conversation_id` for the later calls. One conversation per visitor session can carry many messages. Fires `conversation_started`.",
    params: { slug: slugParam },
    body: startSchema,
    optionalBody: true,
    response: { status: 201, data: startedConversationSchema },
    errors: { 403: "The slug names no active chatbot of your organisation" },
    handler: async (ctx) =>
      created(ctx, ok(await ctx.service.conversations.start(ctx.principal.organizationId, ctx.params.slug!, (await ctx.body()) as never, visitorContext(ctx.event, ctx.service)))),
  },
  {
    method: "POST",
    path: "/chatbots/:slug/conversations/:id/messages",
    operationId: "sendMessage",
    idempotent: true,
    tags: ["Chatbots"],
    summary: "Send a visitor message and receive the AI reply",
    description:
      "Render `data.reply` as HTML, unmodified: it carries the branding element while branding is required. `meta` has the organisation's credits after this message. " +
      "With `Accept: text/event-stream` this path answers Server-Sent Events instead, exactly as `POST .../messages/stream` does (documented there, so this operation's answer has one type). " +
      "A 500 stores nothing and charges nothing: retry once. A client that disconnects before the answer is complete (either way) gets nothing stored or charged. Fires `message_received`." +
      HUMAN_REPLY,
    params: chatbotConversation,
    body: sendSchema,
    response: { data: sendReplySchema, meta: creditMetaSchema },
    errors: SEND_ERRORS,
    handler: async ({ event, service, principal, params, body, idempotentReply }) => {
      const pending = await service.chat.prepare(principal.organizationId, params.slug!, looseId(params.id), (await body()) as never);
      if (wantsEventStream(event)) return streamReply(event, idempotentReply(pending));
      const { data, meta } = await pending.answer({ signal: event.req.signal });
      return ok(data, { meta: { ...meta } });
    },
  },
  {
    method: "POST",
    path: "/chatbots/:slug/conversations/:id/messages/stream",
    operationId: "streamMessage",
    idempotent: true,
    tags: ["Chatbots"],
    summary: "Send a visitor message and receive the AI reply as Server-Sent Events",
    description:
      "`delta` events `{text}` (Markdown as the model writes it: show it as text), then one `done` event whose data is the JSON envelope `sendMessage` answers, or one `error` event carrying an error envelope. " +
      "Refusals known before the model is called are ordinary JSON answers. A client that disconnects before `done` gets nothing stored or charged. Fires `message_received`. " +
      "While a person handles the conversation there are no `delta` events: the `done` event carries the `HumanHandledReply`.",
    params: chatbotConversation,
    body: sendSchema,
    stream: true,
    response: { data: sendReplySchema, meta: creditMetaSchema, description: "The event stream; its `done` event carries the envelope described by `sendMessage`" },
    errors: SEND_ERRORS,
    handler: async ({ event, service, principal, params, body, idempotentReply }) =>
      streamReply(event, idempotentReply(await service.chat.prepare(principal.organizationId, params.slug!, looseId(params.id), (await body()) as never))),
  },
  {
    method: "POST",
    path: "/chatbots/:slug/conversations/:id/messages/rate",
    operationId: "rateMessage",
    tags: ["Chatbots"],
    summary: "Rate an assistant message",
    description: "Rating the same message again replaces its rating.",
    params: chatbotConversation,
    body: rateSchema,
    response: { data: ratingSchema },
    errors: { ...SLUG_403, 404: "The conversation, or an assistant message `message_id` in it, does not exist" },
    handler: async ({ service, principal, params, body }) =>
      ok(await service.chat.rate(principal.organizationId, params.slug!, looseId(params.id), (await body()) as never)),
  },
  {
    method: "POST",
    path: "/chatbots/:slug/conversations/:id/messages/:message_id/regenerate",
    operationId: "regenerateMessage",
    idempotent: true,
    tags: ["Chatbots"],
    summary: "Replace the latest assistant reply with a new answer",
    description: "The old reply is left out of history from then on. Charged like a message.",
    params: { ...chatbotConversation, message_id: idParam("Assistant message") },
    response: { data: replySchema, meta: creditMetaSchema },
    errors: {
      ...SLUG_403,
      404: "The conversation or the assistant message does not exist",
      400: "The conversation has ended, a person handles it, or the message is not the latest reply",
      429: "The organisation's monthly credits are used up",
    },
    handler: async ({ event, service, principal, params }) => {
      const { data, meta } = await service.chat.regenerate(principal.organizationId, params.slug!, looseId(params.id), looseId(params.message_id), { signal: event.req.signal });
      return ok(data, { meta: { ...meta } });
    },
  },
  {
    method: "POST",
    path: "/chatbots/:slug/conversations/:id/handoff",
    operationId: "requestHandoff",
    tags: ["Chatbots"],
    summary: "The visitor asks for a person",
    description:
      "The conversation goes to people (`status: \"human\"`): the bot stops answering (messages are stored and answered with `reply: null`) until an operator releases it. " +
      "Fires `handoff_requested` when the conversation was with the bot; asking again while a person has it answers the same state and fires nothing. " +
      "Works whatever the chatbot's `handoff_enabled` says (that setting decides whether the widget offers a person).",
    params: chatbotConversation,
    body: handoffSchema,
    optionalBody: true,
    response: { data: handoffRequestedSchema },
    errors: { 403: "The slug names no active chatbot of your organisation", ...CONVERSATION_404, 400: "The conversation has ended" },
    handler: async ({ service, principal, params, body }) =>
      ok(await service.conversations.requestHandoff(principal.organizationId, params.slug!, looseId(params.id), (await body()) as never)),
  },
  {
    method: "GET",
    path: "/chatbots/:slug/conversations/:id",
    operationId: "getConversationHistory",
    tags: ["Chatbots"],
    summary: "Conversation history",
    params: chatbotConversation,
    response: { data: conversationHistorySchema },
    errors: { ...SLUG_403, ...CONVERSATION_404 },
    handler: async ({ service, principal, params }) => ok(await service.conversations.history(principal.organizationId, params.slug!, looseId(params.id))),
  },
  {
    method: "POST",
    path: "/chatbots/:slug/conversations/:id/end",
    operationId: "endChatbotConversation",
    tags: ["Chatbots"],
    summary: "End a conversation",
    description: "Idempotent: ending it again answers the same figures. The first call fires `conversation_ended`.",
    params: chatbotConversation,
    response: { data: endedConversationSchema },
    errors: { ...SLUG_403, ...CONVERSATION_404 },
    handler: async ({ service, principal, params }) => ok(await service.conversations.end(principal.organizationId, params.slug!, looseId(params.id))),
  },
  {
    method: "GET",
    path: "/conversations",
    operationId: "listConversations",
    tags: ["Conversations"],
    summary: "List conversations, newest first",
    description:
      "`status` filters by `active` (the bot answers), `human` (a person answers) or `ended`; `rating` by a visible reply rated `good` or `bad`, or none rated (`unrated`); " +
      "`q` by text in a visible message (case-insensitive; replies are searched as their stored HTML).",
    query: listSchema,
    response: { data: z.array(conversationRecordSchema), meta: pageMetaSchema, links: pageLinksSchema },
    handler: async ({ event, service, principal, query }) => {
      const page = await service.conversations.list(principal.organizationId, listQuery(query, ["page", "per_page", "chatbot", "since", "until", "status", "rating", "q"]));
      return okPage(page, event.url, service.config);
    },
  },
  {
    method: "GET",
    path: "/conversations/:id",
    operationId: "getConversation",
    tags: ["Conversations"],
    summary: "One conversation with its messages",
    params: { id: idParam("Conversation") },
    response: { data: conversationDetailSchema },
    errors: ACCOUNT_CONVERSATION,
    handler: async ({ service, principal, params }) => ok(await service.conversations.get(principal.organizationId, looseId(params.id))),
  },
  {
    method: "POST",
    path: "/conversations/:id/messages",
    operationId: "addConversationMessage",
    idempotent: true,
    tags: ["Conversations"],
    summary: "Add a message to a conversation (no AI call)",
    description:
      "For a person's reply (`role` `agent` with an optional `agent_name`: Markdown, rendered and sanitised like AI replies, never branded; the visitor sees it in history and the widget), " +
      "an operator's reply in the bot's name (`role` `assistant`, the default, rendered the same and branded like AI replies) " +
      "or a visitor message relayed from elsewhere (`role` `user`, which fires `message_received`). Not charged. Posting does not change who answers: hand the conversation off first.",
    params: { id: idParam("Conversation") },
    body: postSchema,
    response: { status: 201, data: messageSchema },
    errors: { ...ACCOUNT_CONVERSATION, 400: "The conversation has ended" },
    handler: async (ctx) => created(ctx, ok(await ctx.service.chat.post(ctx.principal.organizationId, looseId(ctx.params.id), (await ctx.body()) as never))),
  },
  {
    method: "POST",
    path: "/conversations/:id/handoff",
    operationId: "handOffConversation",
    tags: ["Conversations"],
    summary: "A person takes the conversation over",
    description:
      "`status` becomes `human`: visitor messages are stored and answered with `reply: null` (no model call, no charge) until `releaseConversation`. " +
      "Answer the visitor with `addConversationMessage` and `role: \"agent\"`. Idempotent. `handed_off_at` is set the first time only; `reason` is kept as `handoff_reason`.",
    params: { id: idParam("Conversation") },
    body: handoffSchema,
    optionalBody: true,
    response: { data: conversationRecordSchema },
    errors: { ...ACCOUNT_CONVERSATION, 400: "The conversation has ended" },
    handler: async ({ service, principal, params, body }) => ok(await service.conversations.handOff(principal.organizationId, looseId(params.id), (await body()) as never)),
  },
  {
    method: "POST",
    path: "/conversations/:id/release",
    operationId: "releaseConversation",
    tags: ["Conversations"],
    summary: "Give the conversation back to the bot",
    description: "`status` becomes `active`: the bot answers the next visitor message. Idempotent. `handed_off_at` stays.",
    params: { id: idParam("Conversation") },
    response: { data: conversationRecordSchema },
    errors: { ...ACCOUNT_CONVERSATION, 400: "The conversation has ended" },
    handler: async ({ service, principal, params }) => ok(await service.conversations.release(principal.organizationId, looseId(params.id))),
  },
  {
    method: "POST",
    path: "/conversations/:id/end",
    operationId: "endConversation",
    tags: ["Conversations"],
    summary: "End a conversation",
    description: "Unlike the chatbot endpoint, ending an ended conversation is a 400. Fires `conversation_ended`.",
    params: { id: idParam("Conversation") },
    response: { data: endedConversationSchema },
    errors: { ...ACCOUNT_CONVERSATION, 400: "The conversation has already ended" },
    handler: async ({ service, principal, params }) => ok(await service.conversations.endById(principal.organizationId, looseId(params.id))),
  },
];
