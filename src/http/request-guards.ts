import type { H3Event } from "h3";
import type { ChatService } from "../service.js";
import type { Authenticator } from "./auth.js";
import { clientIp } from "./client-ip.js";
import type { HttpErrorReporter } from "./errors.js";
import { createLogger, type Logger, type LogSink } from "./logger.js";
import { createRequestPipeline } from "./pipeline.js";
import { createApiRateLimits } from "./rate-limits.js";

export interface RequestGuardOptions {
  /** Where log lines go. Default: stderr. */
  logSink?: LogSink;
  /** Called with unexpected errors (the client sees a bare 500). */
  onUnexpectedError: HttpErrorReporter;
}

/** The per-request concerns around the API's routes, configured from the service. */
export interface RequestGuards {
  logger: Logger;
  /**
   * The API's middleware: request id, error envelope and one log line per
   * request (unless an outer pipeline does that), and the per-IP rate limit.
   */
  pipeline: (event: H3Event, next: () => unknown) => unknown;
  /** `pipeline` for routes that `authenticate` guards: with shared buckets the guard takes the IP's with the key's. */
  authenticatedPipeline: (event: H3Event, next: () => unknown) => unknown;
  /** Wraps an authenticator with the failed-authentication and per-key limits. */
  authenticate(authenticate: Authenticator): Authenticator;
}

/**
 * Request ids, error envelopes, structured logs and rate limits for an app
 * serving the API, configured from `service.config` (`logLevel`, `rateLimit`, `trustProxy`).
 *
 * @example
 * const guards = createRequestGuards(service, { onUnexpectedError: () => {} });
 * api.use(guards.pipeline);
 * registerRoutes(api, service, apiRoutes, guards.authenticate(createAuthenticator(service)));
 */
export function createRequestGuards(service: ChatService, { logSink, onUnexpectedError }: RequestGuardOptions): RequestGuards {
  const ip = (event: H3Event) => clientIp(event, service.config);
  const logger = createLogger({ level: service.config.logLevel, ...(logSink && { sink: logSink }) });
  const limits = createApiRateLimits(service.config.rateLimit, ip, { shared: service.sharedRateLimits });
  return {
    logger,
    pipeline: createRequestPipeline({ logger, ip, onUnexpectedError, admit: (event) => limits.perIp(event) }),
    authenticatedPipeline: createRequestPipeline({ logger, ip, onUnexpectedError, admit: (event) => limits.perIpBeforeGuard(event) }),
    authenticate: (authenticate) => limits.guard(authenticate),
  };
}

/**
 * Request ids, error envelopes and one log line per request, for an app that
 * mounts the API and serves other routes too (the API's requests are then
 * answered and logged here, once). It sends JSON answers itself (see
 * `sendJson`): install it first, on an app without `onResponse` or `debug`.
 *
 * @example
 * const app = new H3().use(createRequestHandling(service, { onUnexpectedError: () => {} })).mount("/api/v1", createApiApp(service));
 */
export function createRequestHandling(service: ChatService, { logSink, onUnexpectedError }: RequestGuardOptions) {
  const logger = createLogger({ level: service.config.logLevel, ...(logSink && { sink: logSink }) });
  return createRequestPipeline({ logger, ip: (event) => clientIp(event, service.config), onUnexpectedError, sendsJson: true });
}
