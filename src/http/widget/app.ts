import { H3, getRouterParam, type H3Event } from "h3";
import { MAX_MESSAGE_CHARS, type PendingReply } from "../../chat/chat.js";
import type { Branding } from "../../core/branding.js";
import type { Chatbot } from "../../core/chatbots.js";
import { ChatsvcError } from "../../core/errors.js";
import type { BudgetReservation } from "../../core/widget-budgets.js";
import type { ChatService } from "../../service.js";
import { reportUnexpected } from "../app.js";
import { readJsonBody } from "../body.js";
import { clientIp } from "../client-ip.js";
import { ok } from "../envelope.js";
import { toErrorEnvelope, type HttpErrorReporter } from "../errors.js";
import { getAndHead } from "../get-and-head.js";
import { createLogger, type LogSink } from "../logger.js";
import { publicOrigin } from "../own-origins.js";
import { looseId, visitorContext } from "../routes/conversations.js";
import { streamReply, wantsEventStream } from "../sse.js";
import { allowPreflight, sameOriginPolicy } from "./cors.js";
import { createWidgetGuard, type Admitted } from "./guard.js";
import { loadWidgetScript, serveWidgetScript } from "./script.js";
import { createWidgetTokens, widgetSecret, type WidgetTokens } from "./token.js";
import { forVisitor, toVisitorError } from "./visitor-view.js";

export interface WidgetAppOptions {
  /**
   * Chatbots whose widget also works on pages of this server's own origins
   * (`ownOrigins`), whatever their `allowed_origins` say (`serve` lists `demo`,
   * for its demo page). Default none: every page needs its origin listed.
   */
  sameOriginSlugs?: string[];
  /**
   * This server's own origins for `sameOriginSlugs`, e.g. `["https://chat.example.com"]`.
   * Default: the origin of the service's `publicUrl`, else none. Never taken from
   * the request's `Host`, which the client (or a DNS-rebinding page) writes.
   */
  ownOrigins?: readonly string[];
  /** Called with unexpected errors (the client sees a bare 500). Default: `console.error`. */
  onUnexpectedError?: HttpErrorReporter;
  /** Where log lines go (the first refusal of a widget budget in each period; level from the service's `logLevel`). Default: stderr. */
  logSink?: LogSink;
}

/** `GET /widget/{slug}/config` data: what the widget needs to draw itself, nothing an owner keeps private. */
export interface WidgetConfig {
  slug: string;
  display_name: string;
  greeting_message: string;
  placeholder_text: string;
  language: string;
  appearance: Chatbot["appearance"];
  branding: Branding;
  message_max_chars: number;
  /** Whether the widget offers a person to talk to. */
  handoff_enabled: boolean;
}

type Handler = (event: H3Event, admitted: Admitted) => unknown;

/**
 * The public widget surface as an h3 v2 app: `GET /widget.js` and the JSON/SSE
 * endpoints under `/widget/{slug}/...` the script calls. No API key: each
 * chatbot's `allowed_origins` decide which websites may use it, a signed
 * token scopes a visitor to their one conversation, per-IP and
 * per-visitor limits answer 429, and so do the chatbot's widget budgets. The handlers call the same service methods
 * as the API, so conversations count credits and fire webhooks alike
 * (with `source: "widget"`). Mount it at the root, or under a prefix.
 *
 * @example
 * import { H3 } from "h3";
 * import { createApiApp, createWidgetApp } from "chatsvc/h3";
 * const app = new H3().mount("/api/v1", createApiApp(service)).mount("/", createWidgetApp(service));
 * // <script src="https://chat.example.com/widget.js" data-chatbot="support" async></script>
 */
export function createWidgetApp(
  service: ChatService,
  {
    sameOriginSlugs = [],
    ownOrigins = service.config.publicUrl ? [publicOrigin(service.config.publicUrl)] : [],
    onUnexpectedError = reportUnexpected,
    logSink,
  }: WidgetAppOptions = {},
): H3 {
  const logger = createLogger({ level: service.config.logLevel, ...(logSink && { sink: logSink }) });
  loadWidgetScript();
  // The secret is read (or created) on the first request that needs it, so building the app does no I/O.
  let signing: Promise<WidgetTokens> | undefined;
  const tokens = (): Promise<WidgetTokens> =>
    (signing ??= widgetSecret(service).then(
      (secret) => createWidgetTokens(secret, { ttlSeconds: service.config.widget.tokenTtlSeconds }),
      (error: unknown) => {
        signing = undefined;
        throw error;
      },
    ));
  const guard = createWidgetGuard(service, tokens, { sameOrigin: sameOriginPolicy(sameOriginSlugs, ownOrigins) });
  const app = new H3();

  // Sub-app middleware would run for every path of an app mounted at the root,
  // so each handler answers its own errors, keeping the CORS headers on them.
  const respond = async (event: H3Event, work: () => unknown) => {
    event.res.headers.set("vary", "origin");
    event.res.headers.set("cache-control", "no-store");
    try {
      return await work();
    } catch (error) {
      return toVisitorError(toErrorEnvelope(error, event, onUnexpectedError));
    }
  };
  const route = (method: "GET" | "POST", path: string, handler: Handler) =>
    app.on(method, path, (event) => respond(event, async () => handler(event, await guard.admit(event, getRouterParam(event, "slug", { decode: true }) ?? ""))));
  /** A route addressing one conversation: the visitor's token must be for it. */
  const visitorRoute = (method: "GET" | "POST", path: string, handler: (event: H3Event, admitted: Admitted, conversationId: number) => unknown) =>
    route(method, path, async (event, admitted) => handler(event, admitted, await guard.conversation(event, admitted, looseId(getRouterParam(event, "id")))));

  getAndHead(app, "/widget.js", serveWidgetScript);

  app.options("/widget/:slug/**", (event) =>
    respond(event, async () => {
      allowPreflight(event, (await guard.admitOrigin(event, getRouterParam(event, "slug", { decode: true }) ?? "")).origin);
      event.res.status = 204;
      return null;
    }),
  );

  route("GET", "/widget/:slug/config", async (_event, { bot }) => ok(await toWidgetConfig(service, bot)));

  route("POST", "/widget/:slug/conversations", async (event, { bot }) => {
    const { visitorId, pageUrl } = startInput(await readJsonBody(event));
    const context = visitorContext(event, service);
    const started = await service.conversations.start(bot.organization_id, bot.slug, { visitor_id: visitorId as string | undefined }, { ...context, sourceUrl: pageUrl ?? context.sourceUrl, source: "widget" });
    event.res.status = 201;
    const { token, expires_at } = (await tokens()).issue(started.conversation_id, bot.id);
    return ok({ ...started, token, token_expires_at: expires_at });
  });

  // `?after=<message id>` keeps the widget's polling for a person's replies small: only newer messages come back.
  visitorRoute("GET", "/widget/:slug/conversations/:id", async (event, { bot }, id) => {
    const history = await service.conversations.history(bot.organization_id, bot.slug, id);
    const after = looseId(event.url.searchParams.get("after") ?? undefined);
    return ok(after > 0 ? { ...history, messages: history.messages.filter((m) => m.id > after) } : history);
  });

  visitorRoute("POST", "/widget/:slug/conversations/:id/handoff", async (event, { bot }, id) => {
    const { conversation_id, status, handed_off_at } = await service.conversations.requestHandoff(bot.organization_id, bot.slug, id, (await readJsonBody(event)) as never, {
      requireEnabled: true,
    });
    return ok({ conversation_id, status, handed_off_at });
  });

  visitorRoute("POST", "/widget/:slug/conversations/:id/messages", async (event, { bot }, id) => {
    const checked = await service.chat.prepare(bot.organization_id, bot.slug, id, (await readJsonBody(event)) as never);
    // A message a person will answer costs the chatbot no model call, so it spends no budget.
    const reservation =
      checked.handledBy === "human"
        ? undefined
        : await service.widgetBudgets.reserve(bot, clientIp(event, service.config), (spent) =>
            logger.log("warn", "widget budget exhausted", { chatbot: spent.agent.slug, budget: spent.budget, limit: spent.limit, resets_at: spent.resets_at }),
          );
    const pending = forVisitor(reservation ? givingBackUnanswered(checked, reservation) : checked);
    if (wantsEventStream(event)) return streamReply(event, pending);
    return ok((await pending.answer({ signal: event.req.signal })).data);
  });

  visitorRoute("POST", "/widget/:slug/conversations/:id/messages/rate", async (event, { bot }, id) =>
    ok(await service.chat.rate(bot.organization_id, bot.slug, id, (await readJsonBody(event)) as never)),
  );

  visitorRoute("POST", "/widget/:slug/conversations/:id/leads", async (event, { bot }, id) => {
    const lead = await service.leads.capture(bot.organization_id, bot.slug, id, (await readJsonBody(event)) as never);
    event.res.status = 201;
    return ok(lead);
  });

  visitorRoute("POST", "/widget/:slug/conversations/:id/end", async (_event, { bot }, id) => ok(await service.conversations.end(bot.organization_id, bot.slug, id)));

  app.all("/widget/**", (event) =>
    respond(event, () => {
      throw ChatsvcError.notFound(`No route for ${event.req.method} ${event.url.pathname}`);
    }),
  );
  return app;
}

/** A pending reply that gives its budget reservation back when no answer is stored (model failure, abandoned, refused). */
function givingBackUnanswered(pending: PendingReply, reservation: BudgetReservation): PendingReply {
  return {
    conversationId: pending.conversationId,
    handledBy: pending.handledBy,
    async answer(options) {
      try {
        return await pending.answer(options);
      } catch (error) {
        await reservation.release();
        throw error;
      }
    },
  };
}

async function toWidgetConfig(service: ChatService, bot: Chatbot): Promise<WidgetConfig> {
  return {
    slug: bot.slug,
    display_name: bot.display_name,
    greeting_message: bot.greeting_message,
    placeholder_text: bot.placeholder_text,
    language: bot.language,
    appearance: bot.appearance,
    branding: await service.branding(bot.organization_id),
    message_max_chars: MAX_MESSAGE_CHARS,
    handoff_enabled: bot.handoff_enabled,
  };
}

/**
 * The widget's start body: an optional `visitor_id` (checked by the service)
 * and the page the chat runs on. Cross-origin requests carry only the origin
 * in `Referer`, so the script sends the full page URL; a value that is not an
 * http(s) URL is ignored rather than refused, as it is only analytics.
 */
function startInput(input: unknown): { visitorId: unknown; pageUrl: string | undefined } {
  if (input === undefined) return { visitorId: undefined, pageUrl: undefined };
  if (input === null || typeof input !== "object" || Array.isArray(input)) throw ChatsvcError.validation({ body: ["The request body must be a JSON object."] });
  const { visitor_id: visitorId, page_url: page } = input as Record<string, unknown>;
  const pageUrl = typeof page === "string" && page.length <= 2048 && /^https?:\/\//i.test(page) && !page.includes("\0") && URL.canParse(page) ? page : undefined;
  return { visitorId, pageUrl };
}
