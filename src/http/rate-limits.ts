import type { H3Event } from "h3";
import type { RateLimitOptions } from "../config.js";
import { ChatsvcError } from "../core/errors.js";
import type { Principal } from "../core/keys.js";
import { createRateLimiter, type RateDecision, type RateLimiter } from "../widget/rate-limit.js";

/** The API's limits: per client IP, per API key, and failed authentications per IP. */
export interface ApiRateLimits {
  /** Middleware taking one request from the client IP's bucket (429 when spent). */
  perIp(event: H3Event): void;
  /**
   * Wraps the authenticator: an IP whose failed-authentication bucket is spent
   * is refused before its key is even looked at (so guessing keys is slow); a
   * 401 spends one; a verified key then takes one from its own bucket.
   */
  guard(authenticate: (event: H3Event) => Principal): (event: H3Event) => Principal;
}

interface Limit {
  limiter: RateLimiter;
  perMinute: number;
}

/**
 * In-memory token buckets for the REST API, from `config.rateLimit`. Each
 * allows bursts of its per-minute figure and refills evenly over a minute. A
 * refusal is a 429 `Too many requests; try again in N s` (the credit 429 says
 * `Monthly credit limit reached`) with `Retry-After`; every answer carries
 * `X-RateLimit-Limit`, `-Remaining` and `-Reset` (seconds until the bucket is
 * full) of the bucket closest to empty. A limit of 0 is off.
 *
 * @example
 * const limits = createApiRateLimits(service.config.rateLimit, (event) => getRequestIP(event));
 * api.use((event) => limits.perIp(event));
 * registerRoutes(api, service, apiRoutes, limits.guard(createAuthenticator(service)));
 */
export function createApiRateLimits(
  { perKeyPerMinute, perIpPerMinute, failedAuthPerIpPerMinute }: Required<RateLimitOptions>,
  ipOf: (event: H3Event) => string | undefined,
  { now }: { now?: () => number } = {},
): ApiRateLimits {
  const make = (perMinute: number): Limit | undefined =>
    perMinute > 0 ? { limiter: createRateLimiter({ capacity: perMinute, refillPerSecond: perMinute / 60, ...(now && { now }) }), perMinute } : undefined;
  const ip = make(perIpPerMinute);
  const key = make(perKeyPerMinute);
  const failedAuth = make(failedAuthPerIpPerMinute);
  const clientOf = (event: H3Event) => ipOf(event) ?? "unknown";

  return {
    perIp(event) {
      if (!ip) return;
      admit(event, ip, ip.limiter.take(clientOf(event)), "Too many requests");
    },

    guard(authenticate) {
      return (event) => {
        if (failedAuth) {
          // A zero-cost take reads the bucket without spending it.
          const level = failedAuth.limiter.take(clientOf(event), 0);
          if (level.remaining < 1) refuse(failedAuth, secondsUntilOne(level, failedAuth.perMinute), "Too many failed authentication attempts", level);
        }
        let principal: Principal;
        try {
          principal = authenticate(event);
        } catch (error) {
          if (failedAuth && ChatsvcError.isError(error) && error.status === 401) failedAuth.limiter.take(clientOf(event));
          throw error;
        }
        if (key) admit(event, key, key.limiter.take(`key:${principal.keyId}`), "Too many requests");
        return principal;
      };
    },
  };
}

/** Lets a request through, reporting the bucket on the response when it is the tightest so far; else 429. */
function admit(event: H3Event, limit: Limit, decision: RateDecision, message: string): void {
  if (!decision.ok) refuse(limit, decision.retryAfterSeconds, message, decision);
  // The remaining count already on the response, kept as a number: reading it back from the headers costs more.
  const context = event.context as { rateLimitShown?: number };
  if (context.rateLimitShown !== undefined && context.rateLimitShown <= decision.remaining) return;
  context.rateLimitShown = decision.remaining;
  const headers = event.res.headers;
  headers.set("x-ratelimit-limit", String(limit.perMinute));
  headers.set("x-ratelimit-remaining", String(Math.max(0, decision.remaining)));
  headers.set("x-ratelimit-reset", String(Math.ceil(decision.resetMs / 1000)));
}

function refuse(limit: Limit, retryAfterSeconds: number, message: string, decision: RateDecision): never {
  throw new ChatsvcError(429, `${message}; try again in ${retryAfterSeconds} s`, {
    headers: { "retry-after": String(retryAfterSeconds), ...rateHeaders(limit, decision) },
    details: { retry_after: retryAfterSeconds },
  });
}

function rateHeaders(limit: Limit, { remaining, resetMs }: Pick<RateDecision, "remaining" | "resetMs">): Record<string, string> {
  return {
    "x-ratelimit-limit": String(limit.perMinute),
    "x-ratelimit-remaining": String(Math.max(0, remaining)),
    "x-ratelimit-reset": String(Math.ceil(resetMs / 1000)),
  };
}

/** Whole seconds until a bucket read with a zero-cost take holds one token again. */
function secondsUntilOne({ resetMs }: RateDecision, perMinute: number): number {
  const msPerToken = 60_000 / perMinute;
  // resetMs covers the way up to full; the last (capacity - 1) tokens of it are not needed.
  return Math.max(1, Math.ceil((resetMs - (perMinute - 1) * msPerToken) / 1000));
}
