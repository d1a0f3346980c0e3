import type { H3Event } from "h3";
import { refuseDotSegments } from "./dot-segments.js";
import { toErrorEnvelope, type HttpErrorReporter } from "./errors.js";
import { sendJson } from "./json-answer.js";
import { CLIENT_CLOSED_REQUEST, logRequest, scopeOf, type Logger } from "./logger.js";
import { requestIdOf } from "./request-id.js";

export interface RequestPipelineOptions {
  logger: Logger;
  /** The client's IP, for the log line. */
  ip: (event: H3Event) => string | undefined;
  /** Called with unexpected errors (the client sees a bare 500). */
  onUnexpectedError: HttpErrorReporter;
  /**
   * Runs before the route, inside the error handling (e.g. the per-IP rate limit: its 429 is an envelope).
   * A promise (a limit kept in the database) holds the route until it settles.
   */
  admit?: (event: H3Event) => void | Promise<void>;
  /**
   * Sends JSON answers (the error envelope included) itself rather than through h3 (see `sendJson`).
   * Only for the first middleware of an app without response hooks: middleware
   * around it, or h3's `onResponse`, would find the answer already sent.
   */
  sendsJson?: boolean;
}

/**
 * The one middleware around every request: it puts the request id on the
 * response, turns any error into the envelope, writes one log line when the
 * request is answered, refuses paths with dot segments, and runs `admit` first. Installed on the API and on
 * the server around it; only the outermost one answers and logs (a nested
 * one only admits), so a request pays for one layer. It stays synchronous
 * for synchronous handlers: an async middleware costs a promise and a
 * microtask hop per request.
 *
 * @example
 * app.use(createRequestPipeline({ logger, ip: (event) => clientIp(event, service.config), onUnexpectedError: () => {} }));
 */
export function createRequestPipeline({ logger, ip, onUnexpectedError, admit, sendsJson = false }: RequestPipelineOptions) {
  // Made once, not per request: a cheap request answered synchronously allocates no closures here.
  const failed = (event: H3Event, started: number, error: unknown) => {
    // h3's control values (symbols) are not errors: let h3 see them.
    if (typeof error === "symbol") throw error;
    const envelope = toErrorEnvelope(error, event, onUnexpectedError);
    // No one reads this answer: the client closed the connection first (a visitor who left mid-reply cancels its model
    // call). Logged as that, not as the failure the handler ended with because of it.
    const nodeRes = event.runtime?.node?.res;
    const gone = nodeRes?.closed === true && !nodeRes.writableEnded;
    logRequest(logger, event, { status: gone ? CLIENT_CLOSED_REQUEST : (event.res.status ?? 500), started, ip: ip(event), aborted: gone });
    return (sendsJson && sendJson(event, envelope)) || envelope;
  };
  const answered = (event: H3Event, started: number, result: unknown) => {
    const nodeRes = event.runtime?.node?.res;
    if (isPlain(result) || !nodeRes || nodeRes.writableFinished) {
      logRequest(logger, event, { status: statusOf(result, event), started, ip: ip(event) });
      if (sendsJson) return sendJson(event, result) ?? result;
    } else {
      // A stream (Server-Sent Events) or a Response: log once it is sent, with the status that went out.
      const logSent = () =>
        logRequest(logger, event, { status: nodeRes.statusCode || statusOf(result, event), started, ip: ip(event), aborted: !nodeRes.writableFinished });
      // A handler may hand its stream over a turn later (streamed replies do), after a client that went away closed the response.
      if (nodeRes.closed) logSent();
      else nodeRes.once("close", logSent);
    }
    return result;
  };
  return (event: H3Event, next: () => unknown): unknown => {
    const scope = scopeOf(event);
    if (scope.piped) {
      const admitted = admit?.(event);
      return admitted ? admitted.then(next) : next();
    }
    scope.piped = true;
    const started = performance.now();
    requestIdOf(event);
    let result: unknown;
    try {
      refuseDotSegments(event);
      const admitted = admit?.(event);
      result = admitted ? admitted.then(next) : next();
    } catch (error) {
      return failed(event, started, error);
    }
    return typeof (result as Promise<unknown> | undefined)?.then === "function"
      ? (result as Promise<unknown>).then(
          (value) => answered(event, started, value),
          (error) => failed(event, started, error),
        )
      : answered(event, started, result);
  };
}

/** A JSON value or text: h3 sends it at once, so the request is answered when the handler returns. */
function isPlain(result: unknown): boolean {
  if (result === null || typeof result !== "object") return true;
  const proto = Object.getPrototypeOf(result);
  return proto === Object.prototype || proto === Array.prototype || proto === null;
}

function statusOf(result: unknown, event: H3Event): number {
  const fromResult = !isPlain(result) ? (result as { status?: unknown }).status : undefined;
  return typeof fromResult === "number" ? fromResult : (event.res.status ?? 200);
}
