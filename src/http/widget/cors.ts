import type { H3Event } from "h3";
import type { Chatbot } from "../../core/chatbots.js";
import { ChatsvcError } from "../../core/errors.js";

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

/** Which chatbots work on this server's own pages unconfigured, and what those pages' origins are. */
export interface SameOriginPolicy {
  slugs: ReadonlySet<string>;
  /** This server's own origins, e.g. `https://chat.example.com`; never taken from a request. */
  origins: ReadonlySet<string>;
  /** Their `host[:port]`, compared with `Host` on same-origin requests that carry no `Origin`. */
  hosts: ReadonlySet<string>;
}

/**
 * The policy for `slugs` on `origins`, parsed once rather than per request.
 *
 * @example
 * sameOriginPolicy(["demo"], ["http://127.0.0.1:3000", "http://localhost:3000"])
 */
export function sameOriginPolicy(slugs: readonly string[], origins: readonly string[]): SameOriginPolicy {
  const parsed = origins.map((o) => new URL(o));
  return { slugs: new Set(slugs), origins: new Set(parsed.map((u) => u.origin)), hosts: new Set(parsed.map((u) => u.host)) };
}

/**
 * Where the request comes from, before any chatbot is looked at. Requests
 * without any browser origin signal (curl, scripts) are refused: this surface
 * exists for browsers only. Same-origin GET requests carry no `Origin` header
 * in browsers, so `Sec-Fetch-Site: same-origin` identifies them, and the
 * `Host` the browser addressed must then be one of the own origins' hosts.
 *
 * The own origins are configured (`publicUrl`) or where the server listens,
 * never the request's `Host`: a page on `evil.example` whose name resolves to
 * this server (DNS rebinding), or a script, sends `Host: evil.example` too.
 *
 * @example
 * const origin = requestOrigin(event, policy); // { echo: "https://shop.example", sameOrigin: false }
 */
export function requestOrigin(event: H3Event, policy: SameOriginPolicy): RequestOrigin {
  const headers = event.req.headers;
  const origin = headers.get("origin");
  const sameSite = headers.get("sec-fetch-site") === "same-origin";
  const sameOrigin = origin === null ? sameSite && policy.hosts.has(headers.get("host")?.toLowerCase() ?? "") : policy.origins.has(originOf(origin));
  if (origin === null && !sameSite) throw ChatsvcError.forbidden("The widget API answers browsers only: the request has no Origin header");
  return { echo: origin, sameOrigin };
}

/**
 * Whether the page the request comes from may use `bot`'s widget. A
 * cross-origin page must be listed in the chatbot's `allowed_origins` (empty:
 * the widget is off). A page of this server's own origins is accepted for the
 * chatbots of the same-origin policy too: `serve` lists the `demo` bot there,
 * so its demo page works unconfigured.
 *
 * @example
 * if (!mayUseWidget(bot, requestOrigin(event, policy), policy.slugs)) throw widgetRefused();
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

/** The serialised origin, as `URL` writes it; "" for what is not one (e.g. `null`). */
function originOf(origin: string): string {
  return URL.canParse(origin) ? new URL(origin).origin : "";
}
