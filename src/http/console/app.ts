import { H3, getRouterParams, type H3Event } from "h3";
import { ChatsvcError } from "../../core/errors.js";
import type { ChatService } from "../../service.js";
import { apiRoutes, reportUnexpected, type ApiAppOptions } from "../app.js";
import { getAndHead } from "../get-and-head.js";
import { createRequestGuards } from "../request-guards.js";
import { allowedMethods, registerRoutes, type RouteDefinition } from "../router.js";
import { serveAsset, servePage } from "./assets.js";
import { consoleRoutes } from "./routes.js";
import { createCsrfGuard, createSessionAuthenticator } from "./session.js";

export type ConsoleAppOptions = ApiAppOptions;

/** The API's routes as the console calls them: under `/api/v1`, with the session's principal. */
const proxiedApiRoutes = (): RouteDefinition[] => apiRoutes.filter((r) => r.auth !== false).map((r) => ({ ...r, path: `/api/v1${r.path}` }));

/**
 * The operator console as an h3 v2 app whose routes are relative to where it is mounted
 * (`chatsvc serve` mounts it at `/console`): the page and its bundle, sign-in, and the
 * API's own routes plus the console's (chatbot settings, knowledge, keys) under `api/`,
 * authenticated by the session cookie and scoped to the user's organisation as the API scopes a key.
 * Writes must come from the console's own origin (see `createCsrfGuard`).
 *
 * @example
 * import { H3 } from "h3";
 * import { createConsoleApp } from "chatsvc/h3";
 * const app = new H3().mount("/console", createConsoleApp(service));
 */
export function createConsoleApp(service: ChatService, { onUnexpectedError = reportUnexpected, logSink }: ConsoleAppOptions = {}): H3 {
  const app = new H3();
  const guards = createRequestGuards(service, { logSink, onUnexpectedError });
  const csrf = createCsrfGuard(service);
  const middleware = [guards.pipeline, csrf];
  const routes = [...consoleRoutes, ...proxiedApiRoutes()];
  registerRoutes(app, service, routes, guards.authenticate(createSessionAuthenticator(service)), {
    middleware,
    authenticatedMiddleware: [guards.authenticatedPipeline, csrf],
  });
  getAndHead(app, "/console.js", (event) => serveAsset(event, "console.js"), { middleware });
  getAndHead(app, "/console.css", (event) => serveAsset(event, "console.css"), { middleware });
  app.all("/api/**", (event: H3Event) => {
    const allowed = allowedMethods(routes, `/api/${getRouterParams(event)._ ?? ""}`);
    if (allowed.length > 0) throw new ChatsvcError(405, `Method ${event.req.method} is not allowed here`, { headers: { allow: allowed.join(", ") } });
    throw ChatsvcError.notFound(`No route for ${event.req.method} ${event.url.pathname}`);
  }, { middleware });
  getAndHead(app, "/", servePage, { middleware });
  return app;
}
