import http from "node:http";
import https from "node:https";
import type { Readable, Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { createPolicyLookup, targetProblem, type AddressPolicy } from "./address-policy.js";

/** Why a guarded fetch gave up; the message is written for whoever asked for the URL. */
export class GuardedFetchError extends Error {
  override readonly name = "GuardedFetchError";
  /** The HTTP status when the server answered with one that is not a success; undefined for every other failure. */
  readonly status: number | undefined;

  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}

export interface GuardedFetchOptions {
  /** Where connections may go; checked on every hop, at connect time. */
  policy: AddressPolicy;
  /** Body bytes, after decoding, at most: a longer body is cut off while it streams. */
  maxBytes: number;
  /** Limit for the whole fetch: every hop, the headers and the body. */
  timeoutMs?: number;
  /** Redirects followed at most. */
  maxRedirects?: number;
  headers?: Record<string, string>;
  /** Looks at the final response's headers before any of its body is read; a returned reason refuses it. */
  accept?: (response: { url: URL; headers: http.IncomingHttpHeaders }) => string | null;
  /** Resolve a 304 Not Modified with an empty body instead of failing (conditional requests send validators). */
  notModified?: boolean;
}

export interface GuardedResponse {
  /** Where the body came from, after redirects. */
  url: URL;
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * A GET for fetching what a user pointed at (a page to ingest) without
 * letting the URL reach the service's own network or exhaust its memory.
 * Every hop is checked with the address policy: the URL before connecting,
 * and the resolved address at connect time (the socket connects to the
 * address that was checked, so DNS rebinding has nothing to slip through).
 * Redirects are followed by hand, each one checked again. The body is
 * counted while it streams and the connection is dropped at `maxBytes`; a
 * `Content-Length` over it, or headers `accept` refuses, end the fetch before
 * any body is read. Rejects with {@link GuardedFetchError}.
 *
 * node:http rather than fetch (undici): its `lookup` option is what lets the
 * policy decide the address a socket connects to.
 *
 * @example
 * const { body, headers } = await guardedFetch("https://example.com/help", { policy: { allowPrivateNetworks: false }, maxBytes: 1 << 20 });
 */
export function guardedFetch(
  raw: string,
  { policy, maxBytes, timeoutMs = 15_000, maxRedirects = 5, headers = {}, accept, notModified = false }: GuardedFetchOptions,
): Promise<GuardedResponse> {
  const lookup = createPolicyLookup(policy);
  return new Promise((resolve, reject) => {
    let request: http.ClientRequest | undefined;
    let settled = false;
    const finish = (outcome: GuardedResponse | GuardedFetchError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (outcome instanceof GuardedFetchError) {
        // Destroying the request closes its socket: the server sees the body refused.
        request?.destroy();
        reject(outcome);
      } else resolve(outcome);
    };
    const fail = (message: string, status?: number) => finish(new GuardedFetchError(message, status));
    const timer = setTimeout(() => fail(`no complete answer within ${timeoutMs} ms`), timeoutMs);

    const get = (url: URL, hop: number) => {
      const refused = hop === 0 ? "refused" : "refused redirect";
      const problem = targetProblem(url, policy);
      if (problem) return fail(`${refused}: ${problem}`);
      request = (url.protocol === "https:" ? https : http).get(url, {
        // A fresh connection per hop, so each one goes through the lookup.
        agent: false,
        lookup: lookup as never,
        family: 4,
        headers: { ...headers, "accept-encoding": "gzip, deflate, br" },
      });
      request.on("error", (error: NodeJS.ErrnoException) => {
        fail(error.code === "EADDRNOTALLOWED" ? `${refused}: ${error.message}` : `cannot fetch (${error.message})`);
      });
      request.on("response", (response) => {
        const status = response.statusCode ?? 0;
        const location = response.headers.location;
        if (REDIRECTS.has(status) && location) {
          response.destroy();
          if (hop >= maxRedirects) return fail(`too many redirects (more than ${maxRedirects})`);
          if (!URL.canParse(location, url)) return fail("refused redirect: the Location is not a valid URL");
          return get(new URL(location, url), hop + 1);
        }
        if (status === 304 && notModified) {
          response.destroy();
          return finish({ url, status, headers: response.headers, body: Buffer.alloc(0) });
        }
        if (status < 200 || status > 299) return fail(`HTTP ${status} ${response.statusMessage ?? ""}`.trim(), status);
        const length = Number(response.headers["content-length"]);
        if (length > maxBytes) return fail(`response too large (${length} bytes; at most ${maxBytes})`);
        const refusal = accept?.({ url, headers: response.headers });
        if (refusal) return fail(refusal);
        readBody(response, url, status);
      });
    };

    const readBody = (response: http.IncomingMessage, url: URL, status: number) => {
      const encoding = (response.headers["content-encoding"] ?? "identity").trim().toLowerCase();
      const decoder = DECODERS.get(encoding);
      if (!decoder) return fail(`unsupported content encoding "${encoding}"`);
      let stream: Readable = response;
      if (decoder !== "identity") {
        stream = response.pipe(decoder());
        stream.on("error", () => fail(`the body is not valid ${encoding}`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const cut = () => fail("the connection closed before the body was complete");
      response.on("error", cut);
      response.on("close", () => {
        if (!response.complete) cut();
      });
      stream.on("data", (chunk: Buffer) => {
        if (settled) return;
        size += chunk.length;
        if (size > maxBytes) {
          chunks.length = 0;
          return fail(`response too large (more than ${maxBytes} bytes)`);
        }
        chunks.push(chunk);
      });
      stream.on("end", () => {
        if (!response.complete) return cut();
        finish({ url, status, headers: response.headers, body: Buffer.concat(chunks, size) });
      });
    };

    if (URL.canParse(raw)) get(new URL(raw), 0);
    else fail("invalid URL");
  });
}

// A Map, not an object literal: the header is the server's to choose, and "constructor" must not find Object.
const DECODERS = new Map<string, "identity" | (() => Transform)>([
  ["identity", "identity"],
  ["gzip", createGunzip],
  ["x-gzip", createGunzip],
  ["deflate", createInflate],
  ["br", createBrotliDecompress],
]);
