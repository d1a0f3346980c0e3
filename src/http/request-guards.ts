import { getRequestIP, type H3Event } from "h3";
import type { Principal } from "../core/keys.js";
import type { ChatService } from "../service.js";
import { createLogger, logRequests, type Logger, type LogSink } from "./logger.js";
import { createApiRateLimits } from "./rate-limits.js";

export interface RequestGuardOptions {
  /** Where log lines go. Default: stderr. */
  logSink?: LogSink;
}

/** The per-request concerns around the API's routes, configured from the service. */
export interface RequestGuards {
  logger: Logger;
  /** Outermost middleware: request id on the response, one log line when answered. */
  logRequests: (event: H3Event, next: () => unknown) => Promise<unknown>;
  /** Middleware: the per-IP rate limit (429 in the envelope when it runs inside the error middleware). */
  perIp: (event: H3Event) => void;
  /** Wraps an authenticator with the failed-authentication and per-key limits. */
  authenticate(authenticate: (event: H3Event) => Principal): (event: H3Event) => Principal;
}

/**
 * Request ids, structured logs and rate limits for an app serving the API,
 * configured from `service.config` (`logLevel`, `rateLimit`, `trustProxy`).
 *
 * @example
 * const guards = createRequestGuards(service);
 * api.use(guards.logRequests).use(envelopeErrors()).use(guards.perIp);
 * registerRoutes(api, service, apiRoutes, guards.authenticate(createAuthenticator(service)));
 */
export function createRequestGuards(service: ChatService, { logSink }: RequestGuardOptions = {}): RequestGuards {
  const ip = clientIp(service);
  const logger = createLogger({ level: service.config.logLevel, ...(logSink && { sink: logSink }) });
  const limits = createApiRateLimits(service.config.rateLimit, ip);
  return {
    logger,
    logRequests: logRequests(logger, { ip }),
    perIp: (event) => limits.perIp(event),
    authenticate: (authenticate) => limits.guard(authenticate),
  };
}

/**
 * Request ids and one log line per request, for an app that mounts the API
 * and serves other routes too (the API's own lines are then written here, once).
 *
 * @example
 * const app = new H3().use(createRequestLogging(service)).mount("/api/v1", createApiApp(service));
 */
export function createRequestLogging(service: ChatService, { logSink }: RequestGuardOptions = {}) {
  return logRequests(createLogger({ level: service.config.logLevel, ...(logSink && { sink: logSink }) }), { ip: clientIp(service) });
}

/** The client's IP: the socket's, or `X-Forwarded-For`'s first only behind a trusted proxy. */
export function clientIp(service: ChatService): (event: H3Event) => string | undefined {
  return (event) => getRequestIP(event, { xForwardedFor: service.config.trustProxy });
}
