import type { H3Event } from "h3";
import type { LogLevel } from "../config.js";
import type { Principal } from "../core/keys.js";
import { isModelError } from "../models/errors.js";
import { requestIdOf } from "./request-id.js";

/** Receives one log line: a JSON object, without the newline. */
export type LogSink = (line: string) => void;

export type LogFields = Record<string, unknown>;

/** A leveled writer of JSON lines. */
export interface Logger {
  readonly level: LogLevel;
  /** True when lines of `level` are written. */
  enabled(level: Exclude<LogLevel, "silent">): boolean;
  /** Writes `{time, level, msg, ...fields}` when `level` is enabled. */
  log(level: Exclude<LogLevel, "silent">, msg: string, fields?: LogFields): void;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Default: a line on stderr. */
  sink?: LogSink;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export const stderrSink: LogSink = (line) => void process.stderr.write(`${line}\n`);

/**
 * A logger writing one JSON object per line.
 *
 * @example
 * const logger = createLogger({ level: "info" });
 * logger.log("info", "shutting down", { signal: "SIGTERM" });
 * // {"time":"2025-01-15T10:30:00.000Z","level":"info","msg":"shutting down","signal":"SIGTERM"}
 */
export function createLogger({ level = "info", sink = stderrSink }: LoggerOptions = {}): Logger {
  const threshold = RANK[level];
  const enabled = (at: Exclude<LogLevel, "silent">) => RANK[at] >= threshold;
  return {
    level,
    enabled,
    log(at, msg, fields = {}) {
      if (!enabled(at)) return;
      let line: string;
      try {
        line = JSON.stringify({ time: new Date().toISOString(), level: at, msg, ...fields });
      } catch {
        line = JSON.stringify({ time: new Date().toISOString(), level: at, msg, note: "fields were not serialisable" });
      }
      try {
        sink(line);
      } catch {
        // A broken sink (closed stderr) must not turn into a failed request.
      }
    },
  };
}

/** What the HTTP layer notes about a request while it runs, for its log line. */
interface RequestScope {
  logged?: boolean;
  logLevel?: Exclude<LogLevel, "silent">;
  error?: unknown;
  principal?: Principal;
}

const scopeOf = (event: H3Event) => event.context as RequestScope;

/**
 * Remembers the error a request failed with, so its log line can say why
 * (the client sees only the envelope). Called where errors become the envelope.
 */
export function recordRequestError(event: H3Event, error: unknown): void {
  scopeOf(event).error = error;
}

/**
 * Logs the request at `level` rather than by its status, e.g. `debug` for
 * health checks that load balancers make every few seconds.
 */
export function logRequestAt(event: H3Event, level: Exclude<LogLevel, "silent">): void {
  scopeOf(event).logLevel = level;
}

/**
 * h3 middleware writing one line per request once it is answered: method,
 * route pattern, path, status, duration, client IP, the key's visible prefix
 * and the request id; never a key, a body or a query string. Failed requests
 * carry the reason: a model provider's failure (kind, model, reason) or an
 * unexpected error's stack. Installed both on the API and on the server
 * around it; only the outermost logs, once.
 *
 * @example
 * app.use(logRequests(createLogger({ level: "info" }), { ip: (event) => getRequestIP(event) }));
 */
export function logRequests(logger: Logger, { ip }: { ip: (event: H3Event) => string | undefined }) {
  return async (event: H3Event, next: () => unknown) => {
    const scope = scopeOf(event);
    if (scope.logged) return next();
    scope.logged = true;
    const started = performance.now();
    const requestId = requestIdOf(event);
    let result: unknown;
    try {
      result = await next();
    } catch (error) {
      scope.error ??= error;
      write(logger, event, requestId, 500, started, ip, false);
      throw error;
    }
    const status = result instanceof Response ? result.status : (event.res.status ?? 200);
    const nodeRes = event.runtime?.node?.res;
    if (nodeRes && !nodeRes.writableFinished) {
      // Over a socket, log once the answer is sent (streams included), with the status that went out.
      nodeRes.once("close", () => write(logger, event, requestId, nodeRes.statusCode || status, started, ip, !nodeRes.writableFinished));
    } else {
      write(logger, event, requestId, status, started, ip, false);
    }
    return result;
  };
}

function write(logger: Logger, event: H3Event, requestId: string, status: number, started: number, ip: (event: H3Event) => string | undefined, aborted: boolean): void {
  const scope = scopeOf(event);
  const level = scope.logLevel ?? (status >= 500 ? "error" : "info");
  if (!logger.enabled(level)) return;
  const route = (event.context.matchedRoute as { route?: string } | undefined)?.route ?? null;
  logger.log(level, "request", {
    request_id: requestId,
    method: event.req.method,
    route,
    path: event.url.pathname.slice(0, 256),
    status,
    duration_ms: Math.round((performance.now() - started) * 10) / 10,
    ip: ip(event) ?? null,
    key_prefix: scope.principal?.keyPrefix ?? null,
    ...(aborted && { aborted: true }),
    ...(status >= 400 && scope.error !== undefined && { error: describeError(scope.error, status) }),
  });
}

/** The reason behind a failure as operators need it; stacks only for the unexpected. */
function describeError(error: unknown, status: number): LogFields {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (isModelError(e)) {
      return { message: e.message, kind: e.kind, model: e.model, reason: e.reason, ...(e.providerStatus !== undefined && { provider_status: e.providerStatus }) };
    }
  }
  const found = error as { message?: unknown; stack?: unknown; cause?: unknown; unhandled?: boolean };
  if (status < 500) return { message: String(found?.message ?? error) };
  // h3 wraps non-HTTP errors; the original is its cause.
  const original = (found?.unhandled && found.cause) || error;
  const { message, stack } = original as { message?: unknown; stack?: unknown };
  return { message: String(message ?? original), ...(typeof stack === "string" && { stack }) };
}
