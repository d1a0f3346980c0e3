import type { H3Event } from "h3";
import type { LogLevel } from "../core/config.js";
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
  /** `log` with the fields already serialised as JSON members (`"a":1,"b":"x"`, or "" for none). */
  logSerialised(level: Exclude<LogLevel, "silent">, msg: string, members: string): void;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Default: a line on stderr. */
  sink?: LogSink;
}

let isoMs = 0;
let isoText = "";
let isoSecond = -1;
let isoSecondText = "";

/**
 * The current time as ISO 8601, formatted once per millisecond however many
 * lines share it, and through `Date` once per second: a busy server logs a
 * request nearly every millisecond.
 */
export function isoNow(ms = Date.now()): string {
  if (ms !== isoMs) {
    isoMs = ms;
    const milli = ms % 1000;
    if (ms - milli !== isoSecond) {
      isoSecond = ms - milli;
      // "2025-01-15T10:30:00."
      isoSecondText = new Date(isoSecond).toISOString().slice(0, -4);
    }
    isoText = `${isoSecondText}${milli < 10 ? "00" : milli < 100 ? "0" : ""}${milli}Z`;
  }
  return isoText;
}

// What JSON.stringify would escape in a string (quote, backslash, control characters, lone surrogates).
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify` of a string, without its cost for the short plain strings of a request's log line. */
function jsonString(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

const jsonStringOrNull = (text: string | null): string => (text === null ? "null" : jsonString(text));

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

let buffered: string[] = [];
let exitHooked = false;

function flushStderr(): void {
  if (buffered.length === 0) return;
  const text = `${buffered.join("\n")}\n`;
  buffered = [];
  try {
    process.stderr.write(text);
  } catch {
    // A closed stderr must not take the server down.
  }
}

/**
 * Lines on stderr, written once per event-loop turn: one write per request
 * (a synchronous syscall on pipes and files) cost about a tenth of a cheap
 * request's time. Lines still pending when the process exits are written then.
 */
export const stderrSink: LogSink = (line) => {
  if (buffered.length === 0) {
    setImmediate(flushStderr);
    if (!exitHooked) {
      exitHooked = true;
      process.once("exit", flushStderr);
    }
  }
  buffered.push(line);
};

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
  const logSerialised = (at: Exclude<LogLevel, "silent">, msg: string, members: string) => {
    if (!enabled(at)) return;
    // Concatenated rather than one object spread into another: this runs once per request.
    const head = `{"time":"${isoNow()}","level":"${at}","msg":${jsonString(msg)}`;
    try {
      sink(members === "" ? `${head}}` : `${head},${members}}`);
    } catch {
      // A broken sink (closed stderr) must not turn into a failed request.
    }
  };
  return {
    level,
    enabled,
    logSerialised,
    log(at, msg, fields = {}) {
      if (!enabled(at)) return;
      let members: string;
      try {
        members = JSON.stringify(fields).slice(1, -1);
      } catch {
        members = `"note":"fields were not serialisable"`;
      }
      logSerialised(at, msg, members);
    },
  };
}

/** The status logged for a request whose client closed the connection before it was answered (nginx's convention). */
export const CLIENT_CLOSED_REQUEST = 499;

/** What the HTTP layer notes about a request while it runs, for its log line. */
export interface RequestScope {
  /** Set by the outermost request pipeline; nested ones (a mounted API) then only admit. */
  piped?: boolean;
  logLevel?: Exclude<LogLevel, "silent">;
  error?: unknown;
  principal?: Principal;
}

export const scopeOf = (event: H3Event) => event.context as RequestScope;

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
 * Writes a request's one log line: method, route pattern, path, status,
 * duration, client IP, the key's visible prefix and the request id; never a
 * key, a body or a query string. Failed requests carry the reason: a model
 * provider's failure (kind, model, reason) or an unexpected error's stack.
 * A request whose client went away says `aborted`; one never answered is
 * logged with {@link CLIENT_CLOSED_REQUEST} and no reason (the reason is the client).
 *
 * @example
 * logRequest(logger, event, { status: 200, started, ip: clientIp(event, service.config) });
 */
export function logRequest(logger: Logger, event: H3Event, { status, started, ip, aborted = false }: { status: number; started: number; ip: string | undefined; aborted?: boolean }): void {
  const scope = scopeOf(event);
  const level = scope.logLevel ?? (status >= 500 ? "error" : "info");
  if (!logger.enabled(level)) return;
  // Written member by member rather than with JSON.stringify: one line per request, and most of its values are short plain strings.
  let members =
    `"request_id":${jsonString(requestIdOf(event))},"method":${jsonString(event.req.method)},` +
    `"route":${jsonStringOrNull((event.context.matchedRoute as { route?: string } | undefined)?.route ?? null)},` +
    `"path":${jsonString(event.url.pathname.slice(0, 256))},"status":${JSON.stringify(status)},` +
    `"duration_ms":${JSON.stringify(Math.round((performance.now() - started) * 10) / 10)},` +
    `"ip":${jsonStringOrNull(ip ?? null)},"key_prefix":${jsonStringOrNull(scope.principal?.keyPrefix ?? null)}`;
  if (aborted) members += `,"aborted":true`;
  if (status >= 400 && status !== CLIENT_CLOSED_REQUEST && scope.error !== undefined) members += `,"error":${JSON.stringify(describeError(scope.error, status))}`;
  logger.logSerialised(level, "request", members);
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
