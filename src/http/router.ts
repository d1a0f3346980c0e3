import { getRouterParams, type H3, type H3Event, type Middleware } from "h3";
import { z } from "zod";
import { ChatsvcError } from "../core/errors.js";
import type { PendingReply } from "../chat/chat.js";
import type { Principal } from "../core/keys.js";
import type { ChatService } from "../service.js";
import type { Authenticator } from "./auth.js";
import { readJsonBody } from "./body.js";
import { runIdempotently } from "./idempotency.js";

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
  /** A streamed reply as an `Idempotency-Key` keeps it (its answer stored under the key); the reply itself without a key. */
  idempotentReply(pending: PendingReply): PendingReply;
}

/** What a route answers on success; the OpenAPI document and the response test read it. */
export interface RouteResponse {
  /** Success status, or statuses when it varies (e.g. created or updated). Default 200. */
  status?: number | readonly number[];
  description?: string;
  /** Schema of `data`. */
  data: z.ZodType;
  /** Schema of `meta`, on the routes that always send one. */
  meta?: z.ZodType;
  /** Schema of `links`, on the routes that always send them. */
  links?: z.ZodType;
  /** The envelope's fixed `message`, on the routes that always send one. */
  message?: string;
  /** False when the body is `data` itself, not an envelope (the OpenAPI document). */
  envelope?: false;
  /**
   * A streamed file instead of JSON (exports): its media types, each with what the body holds.
   * The answer carries `Content-Disposition: attachment`; `data` then describes nothing.
   */
  download?: Record<string, string>;
}

/**
 * One endpoint: how it is matched, what it accepts and answers, and the
 * handler. The schemas are the very objects the core validates with, so the
 * OpenAPI document built from these definitions cannot drift from the server.
 */
export interface RouteDefinition {
  method: Method;
  /** h3 path relative to the API root, e.g. `/chatbots/:slug`. */
  path: string;
  /** Stable operation name (OpenAPI `operationId`). */
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** Default true: the route needs an API key. */
  auth?: boolean;
  /** A schema per `:name` in `path`, for the document (handlers read raw params). */
  params?: Record<string, z.ZodType>;
  /** Query parameters, as the core validates them. */
  query?: z.ZodObject;
  /** The request body, as the core validates it. */
  body?: z.ZodType;
  /** The body may be left out entirely. */
  optionalBody?: true;
  response: RouteResponse;
  /**
   * Answers Server-Sent Events (`text/event-stream`) only; `response` then describes the envelope of the `done` event.
   * An operation has one answer type, so a generated client types it without casts.
   */
  stream?: true;
  /** Creates or charges: takes an `Idempotency-Key` header (see `http/idempotency.ts`). */
  idempotent?: true;
  /**
   * Error statuses this route answers with what causes them, beyond those the
   * document adds itself (401 with auth, 400/413/422 with a body, 422 with a query, 500).
   */
  errors?: Partial<Record<number, string>>;
  handler(ctx: RouteContext): unknown;
}

/** The `:slug` path parameter. */
export const slugParam = z.string().meta({ description: "Chatbot slug" });

/** An integer id path parameter, e.g. `idParam("Conversation")`. */
export const idParam = (what: string) => z.int().positive().meta({ description: `${what} id` });

/**
 * Registers routes on an h3 app and remembers them, so unmatched requests can
 * tell 404 from 405 and the API can describe itself.
 */
export function registerRoutes(
  app: H3,
  service: ChatService,
  routes: RouteDefinition[],
  authenticate: Authenticator,
  { middleware, authenticatedMiddleware = middleware }: { middleware?: Middleware[]; authenticatedMiddleware?: Middleware[] } = {},
): void {
  for (const route of routes) {
    const run = (event: H3Event, principal: Principal) => {
      const ctx: RouteContext = {
        event,
        service,
        principal,
        params: (getRouterParams(event, { decode: true }) ?? {}) as Record<string, string>,
        query: event.url.searchParams,
        body: () => readJsonBody(event),
        idempotentReply: (pending) => pending,
      };
      return route.idempotent ? runIdempotently(ctx, route.handler) : route.handler(ctx);
    };
    // Synchronous while authentication is: a promise and its microtask per request cost more than a cheap route.
    const handler = (event: H3Event) => {
      if (route.auth === false) return run(event, undefined as unknown as Principal);
      const principal = authenticate(event);
      return principal instanceof Promise ? principal.then((p) => run(event, p)) : run(event, principal);
    };
    const routeMiddleware = route.auth === false ? middleware : authenticatedMiddleware;
    app.on(route.method, route.path, handler, routeMiddleware && { middleware: routeMiddleware });
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
