import { getRouterParams, type H3, type H3Event } from "h3";
import { ChatsvcError } from "../core/errors.js";
import type { Principal } from "../core/keys.js";
import type { ChatService } from "../service.js";
import { readJsonBody } from "./body.js";

export type Method = "GET" | "POST" | "PUT" | "DELETE";

/** What a route handler gets: the service, the caller and the request. */
export interface RouteContext {
  event: H3Event;
  service: ChatService;
  /** The verified caller; routes marked `auth: false` get none. */
  principal: Principal;
  params: Record<string, string>;
  query: URLSearchParams;
  /** The parsed JSON body (undefined when empty); 400/413 on bad input. */
  body(): Promise<unknown>;
}

export interface RouteDefinition {
  method: Method;
  /** h3 path relative to the API root, e.g. `/chatbots/:slug`. */
  path: string;
  /** Default true: the route needs an API key. */
  auth?: boolean;
  summary?: string;
  handler(ctx: RouteContext): unknown;
}

/**
 * Registers routes on an h3 app and remembers them, so unmatched requests can
 * tell 404 from 405 and the API can describe itself.
 */
export function registerRoutes(
  app: H3,
  service: ChatService,
  routes: RouteDefinition[],
  authenticate: (event: H3Event) => Principal,
): void {
  for (const route of routes) {
    const handler = (event: H3Event) => {
      const principal = route.auth === false ? (undefined as unknown as Principal) : authenticate(event);
      return route.handler({
        event,
        service,
        principal,
        params: (getRouterParams(event, { decode: true }) ?? {}) as Record<string, string>,
        query: event.url.searchParams,
        body: () => readJsonBody(event),
      });
    };
    app.on(route.method, route.path, handler);
  }
}

/** Methods registered for paths matching `pathname`, for 405 answers. */
export function allowedMethods(routes: RouteDefinition[], pathname: string): Method[] {
  const methods = new Set<Method>();
  for (const route of routes) if (patternOf(route.path).test(pathname)) methods.add(route.method);
  return [...methods];
}

const patterns = new Map<string, RegExp>();
function patternOf(path: string): RegExp {
  let re = patterns.get(path);
  if (!re) {
    re = new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:\w+/g, "[^/]+")}/?$`);
    patterns.set(path, re);
  }
  return re;
}

/** A positive integer path id, or the given 404: a malformed id names nothing that exists. */
export function pathId(value: string | undefined, notFoundMessage: string): number {
  if (value === undefined || !/^[1-9]\d{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) throw ChatsvcError.notFound(notFoundMessage);
  return Number(value);
}
