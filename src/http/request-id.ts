import { randomUUID } from "node:crypto";
import type { H3Event } from "h3";
import { setAnswerHeader } from "./answer-headers.js";

export const REQUEST_ID_HEADER = "x-request-id";

/** What an incoming id may look like to be echoed: short, and safe in headers and log lines. */
const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

interface WithRequestId {
  requestId?: string;
}

/**
 * The request's id: the caller's `X-Request-Id` when it is short and safe
 * (at most 128 of `A-Z a-z 0-9 . _ : -`), else a new UUID. The first call
 * decides and puts it on the response, error responses included, so
 * clients and operators can quote it; later calls return the same id.
 *
 * @example
 * api.use((event) => void requestIdOf(event));
 * log({ request_id: requestIdOf(event) });
 */
export function requestIdOf(event: H3Event): string {
  const context = event.context as WithRequestId;
  if (context.requestId) return context.requestId;
  const incoming = event.req.headers.get(REQUEST_ID_HEADER);
  const id = incoming !== null && SAFE_ID.test(incoming) ? incoming : randomUUID();
  context.requestId = id;
  setAnswerHeader(event, REQUEST_ID_HEADER, id);
  return id;
}
