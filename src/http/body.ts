import { assertBodySize, type H3Event } from "h3";
import { ChatsvcError } from "../core/errors.js";

/** Largest accepted request body (DESIGN.md: over 1 MB is 413). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Deepest accepted JSON nesting: deeper documents are refused before they reach a handler. */
export const MAX_JSON_DEPTH = 32;
/**
 * Most object fields plus array items in one body. No endpoint takes more than a
 * few dozen; the cap stops a 1 MB body of tiny values from costing every later
 * step (validation, metadata JSON) a hundred thousand iterations.
 */
export const MAX_JSON_FIELDS = 10_000;

/**
 * Reads a JSON body. An empty body is `undefined`; a body sent with a `Content-Type` other than JSON is 415; bytes
 * that are not UTF-8 and invalid JSON are 400; a body over {@link MAX_BODY_BYTES} is 413 whether or not
 * `Content-Length` tells the truth.
 * h3's `readBody` has no size limit, hence this.
 */
export async function readJsonBody(event: H3Event): Promise<unknown> {
  const declared = event.req.headers.get("content-length");
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) throw tooLarge();
  const type = event.req.headers.get("content-type");
  const hasBody = (declared !== null && declared !== "0") || event.req.headers.has("transfer-encoding");
  // No Content-Type is read as JSON (bodies are JSON only); a form or text body is a client bug worth naming.
  if (type !== null && hasBody && !isJsonType(type)) {
    throw new ChatsvcError(415, "Unsupported Content-Type: send the body as application/json");
  }
  // Read once per request, however many times a handler asks.
  const context = event.context as { bodyText?: Promise<string> };
  const raw = await (context.bodyText ??= readText(event, declared !== null));
  if (Buffer.byteLength(raw) > MAX_BODY_BYTES) throw tooLarge();
  if (raw.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw ChatsvcError.badRequest("Invalid JSON body");
  }
  const shape = measure(value);
  if (shape.depth > MAX_JSON_DEPTH) throw ChatsvcError.validation({ body: [`The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`] });
  if (shape.fields > MAX_JSON_FIELDS) throw ChatsvcError.validation({ body: [`The request body has more than ${MAX_JSON_FIELDS} fields and items.`] });
  return value;
}

/**
 * The body as text. Over Node it is read straight from the request stream:
 * h3's size limit wraps the body in a web stream, which cost a tenth of a
 * small POST's time. Elsewhere (`app.request`, other runtimes) h3's way.
 */
function readText(event: H3Event, hasLength: boolean): Promise<string> {
  const nodeReq = event.runtime?.node?.req;
  if (!nodeReq || nodeReq.readableDidRead || nodeReq.readableEnded) {
    assertBodySize(event, MAX_BODY_BYTES);
    return event.req.arrayBuffer().then((bytes) => decodeUtf8(new Uint8Array(bytes)));
  }
  // A length and a chunked encoding at once is request smuggling (as h3 answers it).
  if (hasLength && nodeReq.headers["transfer-encoding"] !== undefined) throw ChatsvcError.badRequest("Bad request");
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      nodeReq.off("data", onData);
      nodeReq.off("end", onEnd);
      nodeReq.off("error", onError);
      nodeReq.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        done();
        // The rest is never read: close the connection once the 413 is sent.
        event.res.headers.set("connection", "close");
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      try {
        resolve(decodeUtf8(Buffer.concat(chunks, size)));
      } catch (error) {
        reject(error);
      }
    };
    const onError = (error: Error) => {
      done();
      reject(ChatsvcError.badRequest(`The request body could not be read: ${error.message}`));
    };
    const onClose = () => onError(new Error("the client went away"));
    nodeReq.on("data", onData);
    nodeReq.on("end", onEnd);
    nodeReq.on("error", onError);
    nodeReq.on("close", onClose);
  });
}

// Fatal: a lenient decoder would turn invalid bytes into U+FFFD, silently changing what the client sent.
// The BOM is kept, so a body starting with one stays invalid JSON, as JSON.parse sees it.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw ChatsvcError.badRequest("Invalid UTF-8 in request body");
  }
}

/** `application/json`, or a `+json` type (e.g. `application/merge-patch+json`), with any parameters. */
const isJsonType = (type: string) => /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i.test(type.trim());

const tooLarge = () => new ChatsvcError(413, `Request body too large (limit ${MAX_BODY_BYTES} bytes)`);

/** Nesting depth and number of fields/items, stopping as soon as either limit is passed. */
function measure(value: unknown): { depth: number; fields: number } {
  let depth = 0;
  let fields = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (d > depth) depth = d;
    if (depth > MAX_JSON_DEPTH || fields > MAX_JSON_FIELDS) break;
    if (v !== null && typeof v === "object") {
      const children = Object.values(v);
      fields += children.length;
      for (const child of children) stack.push([child, d + 1]);
    }
  }
  return { depth, fields };
}
