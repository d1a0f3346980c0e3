import type { H3Event } from "h3";
import { ChatsvcError } from "../../core/errors.js";
import { CONSOLE_SESSION_IDLE_MS, type ConsoleSignIn, type ConsoleUser } from "../../core/console-sessions.js";
import type { Principal } from "../../core/keys.js";
import type { ChatService } from "../../service.js";
import { isHttps } from "../client-ip.js";

/** The session cookie's name. */
export const SESSION_COOKIE = "chatsvc_console";

/** The session cookie's value on a request, if any. */
export function sessionCookie(event: H3Event): string | undefined {
  const header = event.req.headers.get("cookie");
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The `Set-Cookie` of a session: HttpOnly (scripts never see it), SameSite=Strict (no
 * other site's page sends it), Secure when the request came over HTTPS (directly, behind a
 * trusted proxy, or on an https `publicUrl`), Path=/ so it works wherever the console is mounted.
 * Its lifetime is the idle limit; the server ends it sooner at sign-out or when idle.
 */
export function setSessionCookie(event: H3Event, service: ChatService, value: string | null): void {
  const secure = isHttps(event, service.config) || service.config.publicUrl?.startsWith("https:") === true;
  const age = value === null ? 0 : Math.floor(CONSOLE_SESSION_IDLE_MS / 1000);
  const attributes = [`${SESSION_COOKIE}=${value ?? ""}`, "Path=/", `Max-Age=${age}`, "HttpOnly", "SameSite=Strict", ...(secure ? ["Secure"] : [])];
  event.res.headers.append("set-cookie", attributes.join("; "));
}

/** Starts the browser's session: the cookie carries the secret, the body only who signed in. */
export function answerSignIn(event: H3Event, service: ChatService, { session, user }: ConsoleSignIn): ConsoleUser {
  setSessionCookie(event, service, session);
  return user;
}

/**
 * The caller of a console request, from its session cookie: the same principal the
 * API builds from a key, so every API route scopes the console's calls to the user's
 * organisation exactly as it scopes a key's. There is no key: the id is the user's, negated,
 * so the per-key rate limit counts each console user apart from every key.
 */
export function createSessionAuthenticator(service: ChatService) {
  return async (event: H3Event): Promise<Principal> => {
    const user = await service.consoleSessions.resume(sessionCookie(event));
    const principal: Principal = { keyId: -user.user_id, keyPrefix: "console", userId: user.user_id, organizationId: user.organization_id, email: user.email };
    (event.context as { principal?: Principal }).principal = principal;
    return principal;
  };
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Refuses cross-site writes (CSRF). The SameSite=Strict cookie already stays home on
 * requests from other sites; this is the second lock for browsers or setups where that
 * is not enough (a sibling subdomain is "same site"): every write must carry an `Origin`
 * equal to this server's own (as the request reached it, or `publicUrl`'s), or, where a
 * browser sends no `Origin`, `Sec-Fetch-Site: same-origin`. Anything else is 403.
 */
export function createCsrfGuard(service: ChatService) {
  return (event: H3Event, next: () => unknown): unknown => {
    if (SAFE_METHODS.has(event.req.method)) return next();
    const origin = event.req.headers.get("origin");
    if (origin !== null ? ownOrigins(event, service).includes(origin) : event.req.headers.get("sec-fetch-site") === "same-origin") return next();
    throw ChatsvcError.forbidden("Cross-site request refused: the console takes writes from its own pages only");
  };
}

function ownOrigins(event: H3Event, service: ChatService): string[] {
  const own = `${isHttps(event, service.config) ? "https" : "http"}://${event.url.host}`;
  const { publicUrl } = service.config;
  return publicUrl ? [own, new URL(publicUrl).origin] : [own];
}
