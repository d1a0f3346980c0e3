import type { H3Event } from "h3";
import type { Chatbot } from "../core/chatbots.js";
import { ChatsvcError } from "../core/errors.js";

/** Headers the widget sends beyond the CORS-safelisted ones. */
export const WIDGET_TOKEN_HEADER = "x-widget-token";
const ALLOWED_METHODS = "GET, POST, OPTIONS";
const ALLOWED_HEADERS = `content-type, accept, ${WIDGET_TOKEN_HEADER}`;
// Browsers cache an allowed preflight this long (seconds); Chromium caps it at 7200.
const PREFLIGHT_MAX_AGE = "600";

/** Where a widget request comes from (see {@link requestOrigin}). */
export interface RequestOrigin {
  /** The `Origin` to echo in `Access-Control-Allow-Origin`; null for same-origin requests that sent none. */
  echo: string | null;
  sameOrigin: boolean;
}

/**
 * Where the request comes from, before any chatbot is looked at. Requests
 * without any browser origin signal (curl, scripts) are refused: this surface
 * exists for browsers only. Same-origin GET requests carry no `Origin` header
 * in browsers, so `Sec-Fetch-Site: same-origin` identifies them; the host is
 * compared without the scheme because a TLS-terminating proxy makes the server see `http`.
 *
 * @example
 * const origin = requestOrigin(event); // { echo: "https://shop.example", sameOrigin: false }
 */
export function requestOrigin(event: H3Event): RequestOrigin {
  const headers = event.req.headers;
  const origin = headers.get("origin");
  const host = headers.get("host");
  const sameOrigin = origin === null ? headers.get("sec-fetch-site") === "same-origin" : host !== null && hostOf(origin) === host.toLowerCase();
  if (origin === null && !sameOrigin) throw ChatsvcError.forbidden("The widget API answers browsers only: the request has no Origin header");
  return { echo: origin, sameOrigin };
}

/**
 * Whether the page the request comes from may use `bot`'s widget. A
 * cross-origin page must be listed in the chatbot's `allowed_origins` (empty:
 * the widget is off). A same-origin page (one served by this server) is
 * accepted only for the chatbots in `sameOriginSlugs`: `serve` lists the
 * `demo` bot there, so its own demo page works on whatever host and port it
 * runs, without configuration.
 *
 * @example
 * if (!mayUseWidget(bot, requestOrigin(event), new Set(["demo"]))) throw widgetRefused();
 */
export function mayUseWidget(bot: Pick<Chatbot, "slug" | "allowed_origins">, origin: RequestOrigin, sameOriginSlugs: ReadonlySet<string>): boolean {
  if (origin.sameOrigin && sameOriginSlugs.has(bot.slug)) return true;
  return origin.echo !== null && bot.allowed_origins.includes(origin.echo);
}

/**
 * The one refusal for an unknown or inactive slug and for a page the chatbot
 * does not allow: telling them apart would let anyone probe which slugs exist.
 */
export const widgetRefused = () => ChatsvcError.forbidden("Chatbot not found, or this website is not allowed to use it");

/** CORS headers of an accepted request; `Vary: Origin` goes on every answer, accepted or not. */
export function allowOrigin(event: H3Event, origin: RequestOrigin): void {
  if (origin.echo === null) return;
  event.res.headers.set("access-control-allow-origin", origin.echo);
  event.res.headers.set("access-control-expose-headers", "retry-after");
}

/** Headers answering an accepted preflight (`OPTIONS`). */
export function allowPreflight(event: H3Event, origin: RequestOrigin): void {
  allowOrigin(event, origin);
  event.res.headers.set("access-control-allow-methods", ALLOWED_METHODS);
  event.res.headers.set("access-control-allow-headers", ALLOWED_HEADERS);
  event.res.headers.set("access-control-max-age", PREFLIGHT_MAX_AGE);
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}
