import http, { type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import https from "node:https";

/** An answer to {@link postJson}: status and headers at once, the body as it streams. */
export interface PostedResponse {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  /** The body's bytes as they arrive; leaving a `for await` over it early closes the connection. */
  body: IncomingMessage;
  /** The whole body as text. */
  text(): Promise<string>;
}

export interface PostJsonOptions {
  headers?: Record<string, string>;
  /** Aborting it cancels the request, or the body while it streams. */
  signal?: AbortSignal;
}

/**
 * Redirects that keep the method and body (RFC 9110 15.4.8-9), followed within the origin only: the
 * headers carry the provider's key. A POST answered with any other 3xx, or sent elsewhere, fails as that status.
 */
const KEEPS_METHOD = new Set([307, 308]);
const MAX_REDIRECTS = 5;

// Kept-alive connections per origin: a chat turn's model call must not pay a TCP (and TLS) handshake.
const agents = { "http:": new http.Agent({ keepAlive: true }), "https:": new https.Agent({ keepAlive: true }) };

/**
 * POSTs a JSON body over `node:http`/`node:https` with kept-alive connections,
 * for model calls on a chat turn's path. Not `ofetch` (undici's `fetch`) there:
 * its Web streams and promise layers took a measurable share of the time from
 * a visitor's message to the first streamed delta (bench scenario 8), which
 * the raw client does not. A request on a kept-alive connection that the
 * server had closed meanwhile fails before any answer: it is sent once more on
 * a new connection, as Node's documentation advises (the server never read it).
 *
 * @example
 * const response = await postJson("http://127.0.0.1:8080/v1/chat/completions", { model, messages, stream: true }, { signal });
 * for await (const bytes of response.body) process(bytes);
 */
export async function postJson(url: string | URL, body: unknown, { headers = {}, signal }: PostJsonOptions = {}): Promise<PostedResponse> {
  const payload = Buffer.from(JSON.stringify(body));
  let target = new URL(url);
  for (let redirects = 0; ; redirects++) {
    const response = await send(target, payload, headers, signal);
    const location = response.headers.location;
    const next = KEEPS_METHOD.has(response.statusCode!) && location ? urlOrUndefined(location, target) : undefined;
    if (!next || next.origin !== target.origin || redirects === MAX_REDIRECTS) return toPosted(response);
    response.resume();
    target = next;
  }
}

/** A Location that is no URL is no redirect: the answer then fails as its status, its body read as any other's. */
function urlOrUndefined(location: string, base: URL): URL | undefined {
  try {
    return new URL(location, base);
  } catch {
    return undefined;
  }
}

function send(target: URL, payload: Buffer, headers: Record<string, string>, signal: AbortSignal | undefined, retried = false): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const transport = target.protocol === "https:" ? https : target.protocol === "http:" ? http : undefined;
    if (!transport) return reject(new TypeError(`Unsupported protocol ${target.protocol} in ${target.origin}`));
    const request = transport.request(target, {
      method: "POST",
      agent: agents[target.protocol as keyof typeof agents],
      headers: { "content-type": "application/json", "content-length": payload.length, ...headers },
      signal,
    });
    let answered = false;
    request.once("response", (response) => {
      answered = true;
      resolve(response);
    });
    // Kept for the request's life: errors after the answer reach its body's reader, not here.
    request.on("error", (error: NodeJS.ErrnoException) => {
      if (answered) return;
      if (!retried && request.reusedSocket && error.code === "ECONNRESET" && !signal?.aborted) {
        resolve(send(target, payload, headers, signal, true));
      } else {
        reject(error);
      }
    });
    request.end(payload);
  });
}

function toPosted(response: IncomingMessage): PostedResponse {
  return {
    status: response.statusCode!,
    statusText: response.statusMessage ?? "",
    headers: response.headers,
    body: response,
    async text() {
      response.setEncoding("utf8");
      let text = "";
      for await (const piece of response) text += piece;
      return text;
    },
  };
}
