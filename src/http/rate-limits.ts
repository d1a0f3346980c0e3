import type { H3Event } from "h3";
import type { RateLimitOptions } from "../core/config.js";
import { ChatsvcError } from "../core/errors.js";
import type { Principal } from "../core/keys.js";
import type { RateLimitStore, RequestTake } from "../core/storage/index.js";
import { createBucketLimiter, type BucketLimiter, type RateDecision } from "../net/token-buckets.js";
import { setAnswerHeader } from "./answer-headers.js";
import { presentedKeyPrefix, type Authenticator } from "./auth.js";

/** The API's limits: per client IP, per API key, and failed authentications per IP and per key prefix. */
export interface ApiRateLimits {
  /** Middleware taking one request from the client IP's bucket (429 when spent); a promise when the buckets are shared. */
  perIp(event: H3Event): void | Promise<void>;
  /**
   * `perIp` for a route that `guard` authenticates: the same with in-process
   * buckets; nothing with shared ones, where the guard takes the IP's bucket
   * with the key's in one round trip, once it knows the key.
   */
  perIpBeforeGuard(event: H3Event): void | Promise<void>;
  /**
   * Wraps the authenticator: a key that verifies is never refused for failures
   * (an IP shared behind a proxy or NAT must not let one client lock out the
   * rest) and then takes one from its own bucket. A 401 spends one from the
   * client IP's failure bucket and the presented key prefix's; once either is
   * spent, further failures answer 429 instead of 401.
   */
  guard(authenticate: Authenticator): Authenticator;
}

interface Limit {
  limiter: BucketLimiter;
  perMinute: number;
  /** `perMinute` as the header says it, made once. */
  perMinuteText: string;
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
 * const limits = createApiRateLimits(service.config.rateLimit, (event) => clientIp(event, service.config));
 * api.use((event) => limits.perIp(event));
 * registerRoutes(api, service, apiRoutes, limits.guard(createAuthenticator(service)));
 */
export function createApiRateLimits(
  { perKeyPerMinute, perIpPerMinute, failedAuthPerIpPerMinute }: Required<RateLimitOptions>,
  ipOf: (event: H3Event) => string | undefined,
  { now, shared }: { now?: () => number; shared?: RateLimitStore } = {},
): ApiRateLimits {
  const make = (name: string, perMinute: number): Limit | undefined =>
    perMinute > 0
      ? { limiter: createBucketLimiter(name, { capacity: perMinute, refillPerSecond: perMinute / 60, ...(now && { now }) }, shared), perMinute, perMinuteText: String(perMinute) }
      : undefined;
  const ip = make("api-ip", perIpPerMinute);
  const key = make("api-key", perKeyPerMinute);
  const failedAuth = make("auth-failures-ip", failedAuthPerIpPerMinute);
  // Apart from the IP buckets, so random prefixes cannot push those out of memory.
  const failedAuthPerPrefix = make("auth-failures-prefix", failedAuthPerIpPerMinute);
  const clientOf = (event: H3Event) => ipOf(event) ?? "unknown";

  /** Spends one failure of the client IP and one of the presented key prefix; 429 when either was spent already. */
  const spendFailure = async (event: H3Event): Promise<void> => {
    if (!failedAuth || !failedAuthPerPrefix) return;
    const prefix = presentedKeyPrefix(event);
    const decisions = await Promise.all([failedAuth.limiter.take(clientOf(event)), ...(prefix ? [failedAuthPerPrefix.limiter.take(prefix)] : [])]);
    const refused = decisions.filter((d) => !d.ok).sort((a, b) => b.retryAfterSeconds - a.retryAfterSeconds)[0];
    if (refused) refuse(failedAuth, refused.retryAfterSeconds, "Too many failed authentication attempts", refused);
  };

  const perIp = (event: H3Event): void | Promise<void> => {
    if (!ip) return;
    const decision = ip.limiter.take(clientOf(event));
    // In-process buckets decide at once: no promise on the hot path of a single instance.
    if (!(decision instanceof Promise)) return admit(event, ip, decision, "Too many requests");
    return decision.then((d) => admit(event, ip, d, "Too many requests"));
  };

  /**
   * The guard when buckets live in the database: the key is verified first (at
   * once when remembered), then ONE statement takes the IP's and the key's
   * buckets and reads the `keys` change counter, and the key is confirmed
   * against it (`keys.confirm`): a key revoked through any instance or the CLI
   * is refused by the first request that reaches any instance after the
   * revocation committed, at the cost of a lookup only after a change. With
   * both limits off the statement only reads the counter: a round trip per
   * request is the price of exact revocation without rate limits.
   */
  const sharedGuard = (store: RateLimitStore, authenticate: Authenticator): Authenticator => {
    // A 401 before any take: the IP's bucket, which `perIpBeforeGuard` left to the guard, first (its 429 wins, as elsewhere), then the failure buckets.
    const refusedBeforeTake = async (event: H3Event, error: unknown): Promise<never> => {
      if (ChatsvcError.isError(error) && error.status === 401) {
        if (ip) admit(event, ip, await ip.limiter.take(clientOf(event)), "Too many requests");
        await spendFailure(event);
      }
      throw error;
    };
    const takeAndConfirm = async (event: H3Event, principal: Principal): Promise<Principal> => {
      const limits = [...(ip ? [{ limit: ip, of: clientOf(event) }] : []), ...(key ? [{ limit: key, of: `key:${principal.keyId}` }] : [])];
      if (limits.length === 0 && !authenticate.confirm) return principal;
      let taken: RequestTake;
      try {
        taken = await store.takeForRequest(limits.map(({ limit, of }) => limit.limiter.sharedBucket(of)!));
      } catch {
        // The database failed a moment: this process's buckets decide, and with no counter to trust the key is read again.
        taken = { decisions: limits.map(({ limit, of }) => limit.limiter.takeLocally(of)), keysRevision: Number.NaN };
      }
      // The IP's refusal first, the key's after confirming it: a revoked key is told so, not to slow down.
      if (ip) admit(event, ip, taken.decisions[0]!, "Too many requests");
      let confirmed = principal;
      if (authenticate.confirm) {
        try {
          confirmed = await authenticate.confirm(event, taken.keysRevision);
        } catch (error) {
          return refusedAfterTake(event, error);
        }
      }
      if (key) admit(event, key, taken.decisions[limits.length - 1]!, "Too many requests");
      return confirmed;
    };
    // A 401 after the IP's bucket was taken: only the failure buckets are left to spend.
    const refusedAfterTake = async (event: H3Event, error: unknown): Promise<never> => {
      if (ChatsvcError.isError(error) && error.status === 401) await spendFailure(event);
      throw error;
    };
    return (event) => {
      let principal: Principal | Promise<Principal>;
      try {
        principal = authenticate(event);
      } catch (error) {
        return refusedBeforeTake(event, error);
      }
      return principal instanceof Promise
        ? principal.then((p) => takeAndConfirm(event, p), (error) => refusedBeforeTake(event, error))
        : takeAndConfirm(event, principal);
    };
  };

  return {
    perIp,
    perIpBeforeGuard: shared ? () => {} : perIp,

    guard(authenticate) {
      if (shared) return sharedGuard(shared, authenticate);
      const refused = async (event: H3Event, error: unknown): Promise<never> => {
        if (ChatsvcError.isError(error) && error.status === 401) await spendFailure(event);
        throw error;
      };
      const admitKey = (event: H3Event, principal: Principal): Principal | Promise<Principal> => {
        if (!key) return principal;
        const decision = key.limiter.take(`key:${principal.keyId}`);
        if (decision instanceof Promise) return decision.then((d) => (admit(event, key, d, "Too many requests"), principal));
        admit(event, key, decision, "Too many requests");
        return principal;
      };
      // Without a promise when the key is known and its bucket in this process: a cheap request stays synchronous.
      return (event) => {
        let principal: Principal | Promise<Principal>;
        try {
          principal = authenticate(event);
        } catch (error) {
          return refused(event, error);
        }
        return principal instanceof Promise ? principal.then((p) => admitKey(event, p), (error) => refused(event, error)) : admitKey(event, principal);
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
  setAnswerHeader(event, "x-ratelimit-limit", limit.perMinuteText);
  setAnswerHeader(event, "x-ratelimit-remaining", String(Math.max(0, decision.remaining)));
  setAnswerHeader(event, "x-ratelimit-reset", String(Math.ceil(decision.resetMs / 1000)));
}

function refuse(limit: Limit, retryAfterSeconds: number, message: string, decision: RateDecision): never {
  throw new ChatsvcError(429, `${message}; try again in ${retryAfterSeconds} s`, {
    headers: { "retry-after": String(retryAfterSeconds), ...rateHeaders(limit, decision) },
    details: { retry_after: retryAfterSeconds },
  });
}

function rateHeaders(limit: Limit, { remaining, resetMs }: Pick<RateDecision, "remaining" | "resetMs">): Record<string, string> {
  return {
    "x-ratelimit-limit": limit.perMinuteText,
    "x-ratelimit-remaining": String(Math.max(0, remaining)),
    "x-ratelimit-reset": String(Math.ceil(resetMs / 1000)),
  };
}
