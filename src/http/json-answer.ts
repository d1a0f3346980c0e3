import type { ServerResponse } from "node:http";
import { sanitizeStatusCode, sanitizeStatusMessage, type H3Event } from "h3";

/** h3's value for "the response is already sent": it then only ends what is finished. */
export const HANDLED = Symbol.for("h3.handled");

// h3's own keys for the response state a handler set (`event.res`): read without
// `event.res`, whose `headers` getter would make a Web `Headers` per request.
const RES = Symbol.for("h3.internal.event.res");
const RES_HEADERS = Symbol.for("h3.internal.event.res.headers");

const JSON_TYPE = "application/json;charset=UTF-8";

interface PreparedResponse {
  status?: number;
  statusText?: string;
  [RES_HEADERS]?: Headers;
}

/**
 * Sends a JSON result (a plain object or array) over Node the way h3 and srvx
 * would, and answers `HANDLED`; anything else, or a response already under
 * way, is left to h3 (`undefined`). Same status, status text, headers (h3's
 * JSON content type, the byte length, what the handler set on `event.res`,
 * the answer headers) and bytes; no body for HEAD and the bodiless statuses.
 * Measured cheaper than h3's way for the API's small answers: srvx wraps
 * every answer in a Web-style response and sends it with a separate write, an
 * end and a promise. Only for the outermost middleware of an app without
 * response hooks (`onResponse`, `debug`), which would otherwise see no answer.
 *
 * @example
 * return sendJson(event, result) ?? result;
 */
export function sendJson(event: H3Event, result: unknown): typeof HANDLED | undefined {
  const nodeRes = event.runtime?.node?.res as ServerResponse | undefined;
  if (!nodeRes || nodeRes.headersSent || nodeRes.req?.httpVersion === "2.0" || !isJsonObject(result)) return undefined;
  const prepared = (event as unknown as Record<symbol, PreparedResponse | undefined>)[RES];
  const status = sanitizeStatusCode(prepared?.status);
  const rawText = prepared?.statusText;
  const bodiless = event.req.method === "HEAD" || BODILESS_STATUSES.has(status);
  let body: string | undefined;
  try {
    body = bodiless ? undefined : JSON.stringify(result);
  } catch {
    return undefined; // h3 turns the failure into its error answer.
  }
  const headers = headerList(prepared?.[RES_HEADERS], body);
  try {
    // srvx passes "" when no status text was set, which Node sends as an empty reason phrase.
    nodeRes.writeHead(status, rawText ? sanitizeStatusMessage(rawText) : "", headers);
  } catch {
    return undefined; // An invalid header a handler set: srvx fails it the way it always did.
  }
  nodeRes.end(body);
  return HANDLED;
}

const BODILESS_STATUSES = new Set([100, 101, 102, 204, 205, 304]);

/** What srvx sends for h3's JSON answer: h3's JSON headers with the handler's over them (sorted, as a `Headers` iterates), then the byte length. */
function headerList(set: Headers | undefined, body: string | undefined): string[] {
  if (set === undefined) return body === undefined ? ["content-type", JSON_TYPE] : ["content-type", JSON_TYPE, "content-length", String(Buffer.byteLength(body))];
  const merged = new Headers({ "content-type": JSON_TYPE });
  set.forEach((value, name) => {
    if (name === "set-cookie") merged.append(name, value);
    else merged.set(name, value);
  });
  const list: string[] = [];
  let hasLength = false;
  merged.forEach((value, name) => {
    list.push(name, value);
    if (name === "content-length") hasLength = true;
  });
  if (body !== undefined && !hasLength) list.push("content-length", String(Buffer.byteLength(body)));
  return list;
}

/** What h3 serialises as JSON among the results the pipeline sees: plain objects and arrays. */
function isJsonObject(result: unknown): result is object {
  if (result === null || typeof result !== "object") return false;
  if (Array.isArray(result)) return true;
  const proto = Object.getPrototypeOf(result);
  if (proto !== Object.prototype && proto !== null) return false;
  // h3 may take an object with a `pipe` or `pipeTo` method for a stream: left to h3.
  const candidate = result as { pipe?: unknown; pipeTo?: unknown };
  return typeof candidate.pipe !== "function" && typeof candidate.pipeTo !== "function";
}
