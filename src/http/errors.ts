import { HTTPError, type H3Event } from "h3";
import { ChatsvcError } from "../core/errors.js";
import type { ErrorEnvelope } from "./envelope.js";
import { recordRequestError } from "./logger.js";
import { requestIdOf } from "./request-id.js";

const STATUS_MESSAGES: Record<number, string> = {
  400: "Bad request",
  401: "API key is required",
  403: "Forbidden",
  404: "Not found",
  405: "Method not allowed",
  408: "Request timeout",
  413: "Request body too large",
  415: "Unsupported media type",
  422: "The given data was invalid.",
  429: "Too many requests",
  500: "Internal server error",
};

export interface HttpErrorReporter {
  (error: unknown, event: H3Event): void;
}

/**
 * The one place where errors become the envelope. A {@link ChatsvcError} keeps
 * its status, message, field errors and headers; h3's own errors (bad JSON,
 * body limits, malformed URLs) keep their status; anything else is an
 * unexpected 500 whose message is hidden and which is reported. Every error
 * answer carries the request id, and the error is kept for the request's log line.
 */
export function toErrorEnvelope(error: unknown, event: H3Event, report: HttpErrorReporter): ErrorEnvelope {
  requestIdOf(event);
  recordRequestError(event, error);
  const domain = findDomainError(error);
  if (domain) {
    event.res.status = domain.status;
    for (const [name, value] of Object.entries(domain.headers ?? {})) event.res.headers.set(name, value);
    return { success: false, message: domain.message, ...(domain.errors && { errors: domain.errors }), ...domain.details };
  }
  if (HTTPError.isError(error) && !error.unhandled && error.status < 500) {
    event.res.status = error.status;
    error.headers?.forEach((value, name) => event.res.headers.set(name, value));
    const message = error.status === 400 && /json/i.test(error.message) ? "Invalid JSON body" : error.message || STATUS_MESSAGES[error.status] || "Request failed";
    return { success: false, message };
  }
  report(error, event);
  event.res.status = 500;
  return { success: false, message: "Internal server error" };
}

function findDomainError(error: unknown): ChatsvcError | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (ChatsvcError.isError(e)) return e;
  }
  return undefined;
}

export { STATUS_MESSAGES };
