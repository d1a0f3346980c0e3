import { H3, getRouterParams, type H3Event } from "h3";
import { ChatsvcError } from "../core/errors.js";
import type { ChatService } from "../service.js";
import { createAuthenticator } from "./auth.js";
import type { HttpErrorReporter } from "./errors.js";
import type { LogSink } from "./logger.js";
import { createRequestGuards } from "./request-guards.js";
import { allowedMethods, registerRoutes, type RouteDefinition } from "./router.js";
import { accountRoutes } from "./routes/account.js";
import { analyticsRoutes } from "./routes/analytics.js";
import { chatbotRoutes } from "./routes/chatbots.js";
import { conversationRoutes } from "./routes/conversations.js";
import { correctionRoutes } from "./routes/corrections.js";
import { leadRoutes } from "./routes/leads.js";
import { openApiRoute } from "./routes/openapi.js";
import { privacyRoutes } from "./routes/privacy.js";
import { sampleRoutes } from "./routes/samples.js";
import { webhookRoutes } from "./routes/webhooks.js";

export interface ApiAppOptions {
  /** Called with unexpected errors (the client sees a bare 500), besides the request's log line. Default: nothing more. */
  onUnexpectedError?: HttpErrorReporter;
  /** Where the JSON log lines go (level from the service's `logLevel`). Default: stderr. */
  logSink?: LogSink;
}

/** Every route of the API, relative to `/api/v1`. */
export const apiRoutes: RouteDefinition[] = [
  ...accountRoutes,
  ...chatbotRoutes,
  // Before the `/:id` routes they share a prefix with.
  ...privacyRoutes,
  ...conversationRoutes,
  ...correctionRoutes,
  ...leadRoutes,
  ...analyticsRoutes,
  ...sampleRoutes,
  ...webhookRoutes,
  openApiRoute(() => apiRoutes),
];

/**
 * The chatsvc REST API as an h3 v2 app whose routes are relative to `/api/v1`:
 * mount it in your own app, or serve it as it is.
 *
 * @example
 * import { H3 } from "h3";
 * import { createApiApp } from "chatsvc/h3";
 * const app = new H3().mount("/api/v1", createApiApp(service));
 */
export function createApiApp(service: ChatService, { onUnexpectedError = reportUnexpected, logSink }: ApiAppOptions = {}): H3 {
  const api = new H3();
  const guards = createRequestGuards(service, { logSink, onUnexpectedError });
  // Route middleware rather than app middleware: a mounted app with middleware
  // makes h3 rewrite and restore the URL's path around every request (~1.5 % of a cheap one).
  // The catch-all below takes every other path, so every request still passes through it.
  const middleware = [guards.pipeline];
  registerRoutes(api, service, apiRoutes, guards.authenticate(createAuthenticator(service)), {
    middleware,
    authenticatedMiddleware: [guards.authenticatedPipeline],
  });
  api.all("/**", (event: H3Event) => {
    // The catch-all sees the full path when mounted; its wildcard is the part under the API root.
    const allowed = allowedMethods(apiRoutes, `/${getRouterParams(event)._ ?? ""}`);
    if (allowed.length > 0) {
      throw new ChatsvcError(405, `Method ${event.req.method} is not allowed here`, { headers: { allow: allowed.join(", ") } });
    }
    throw ChatsvcError.notFound(`No route for ${event.req.method} ${event.url.pathname}`);
  }, { middleware });
  return api;
}

/** The default reporter adds nothing: the request's JSON log line already carries the error, its stack and the request id. */
export const reportUnexpected: HttpErrorReporter = () => {};
