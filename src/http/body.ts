import { assertBodySize, type H3Event } from "h3";
import { ChatsvcError } from "../core/errors.js";

/** Largest accepted request body (DESIGN.md: over 1 MB is 413). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Deepest accepted JSON nesting: deeper documents are refused before they reach a handler. */
export const MAX_JSON_DEPTH = 32;

/**
 * Reads a JSON body. An empty body is `undefined`; invalid JSON is 400; a body
 * over {@link MAX_BODY_BYTES} is 413 whether or not `Content-Length` tells the truth.
 * h3's `readBody` has no size limit, hence this.
 */
export async function readJsonBody(event: H3Event): Promise<unknown> {
  const declared = event.req.headers.get("content-length");
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) throw tooLarge();
  assertBodySize(event, MAX_BODY_BYTES);
  const raw = await event.req.text();
  if (Buffer.byteLength(raw) > MAX_BODY_BYTES) throw tooLarge();
  if (raw.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw ChatsvcError.badRequest("Invalid JSON body");
  }
  if (depthOf(value) > MAX_JSON_DEPTH) throw ChatsvcError.validation({ body: [`The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`] });
  return value;
}

const tooLarge = () => new ChatsvcError(413, `Request body too large (limit ${MAX_BODY_BYTES} bytes)`);

function depthOf(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (d > max) max = d;
    if (max > MAX_JSON_DEPTH) return max;
    if (v !== null && typeof v === "object") for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}
