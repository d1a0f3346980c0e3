import { H3, getRouterParams, onError, type H3Event } from "h3";
import { ChatsvcError } from "../core/errors.js";
import type { ChatService } from "../service.js";
import { createAuthenticator } from "./auth.js";
import { toErrorEnvelope, type HttpErrorReporter } from "./errors.js";
import { allowedMethods, registerRoutes, type RouteDefinition } from "./router.js";
import { accountRoutes } from "./routes/account.js";
import { chatbotRoutes } from "./routes/chatbots.js";
import { conversationRoutes } from "./routes/conversations.js";
import { leadRoutes } from "./routes/leads.js";
import { sampleRoutes } from "./routes/samples.js";
import { webhookRoutes } from "./routes/webhooks.js";

export interface ApiAppOptions {
  /** Called with unexpected errors (the client sees a bare 500). Default: `console.error`. */
  onUnexpectedError?: HttpErrorReporter;
}

/** Every route of the API, relative to `/api/v1`. */
export const apiRoutes: RouteDefinition[] = [...accountRoutes, ...chatbotRoutes, ...conversationRoutes, ...leadRoutes, ...sampleRoutes, ...webhookRoutes];

/**
 * The chatsvc REST API as an h3 v2 app whose routes are relative to `/api/v1`:
 * mount it in your own app, or serve it as it is.
 *
 * @example
 * import { H3 } from "h3";
 * import { createApiApp } from "chatsvc/h3";
 * const app = new H3().mount("/api/v1", createApiApp(service));
 */
export function createApiApp(service: ChatService, { onUnexpectedError = reportUnexpected }: ApiAppOptions = {}): H3 {
  const api = new H3();
  // Sub-app config hooks are ignored once mounted; middleware is not.
  api.use(envelopeErrors(onUnexpectedError));
  registerRoutes(api, service, apiRoutes, createAuthenticator(service));
  api.all("/**", (event: H3Event) => {
    // The catch-all sees the full path when mounted; its wildcard is the part under the API root.
    const allowed = allowedMethods(apiRoutes, `/${getRouterParams(event)._ ?? ""}`);
    if (allowed.length > 0) {
      throw new ChatsvcError(405, `Method ${event.req.method} is not allowed here`, { headers: { allow: allowed.join(", ") } });
    }
    throw ChatsvcError.notFound(`No route for ${event.req.method} ${event.url.pathname}`);
  });
  return api;
}

/** The envelope for errors raised outside the API's own routes (e.g. malformed URLs h3 rejects first). */
export function envelopeErrors(onUnexpectedError: HttpErrorReporter = reportUnexpected) {
  return onError((error, event) => toErrorEnvelope(error, event, onUnexpectedError));
}

export const reportUnexpected: HttpErrorReporter = (error, event) => {
  console.error(`chatsvc: unexpected error on ${event.req.method} ${event.url.pathname}`, error);
};
