import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { H3Event } from "h3";
import proxyaddr from "proxy-addr";
import type { ResolvedConfig, TrustProxy } from "../core/config.js";

type Trust = (address: string, hop: number) => boolean;

// Compiled once per configured list, not per request.
const compiled = new WeakMap<readonly string[], Trust>();

/**
 * The client's IP address. Without `trustProxy` it is the socket's peer; with
 * it, the rightmost `X-Forwarded-For` address that is not a trusted proxy
 * (the entries left of it are whatever the client wrote), and the header is
 * ignored when the peer itself is not trusted. Undefined when there is no
 * peer, as for `app.request()` in-process.
 *
 * @example
 * clientIp(event, service.config); // "203.0.113.7"
 */
export function clientIp(event: H3Event, { trustProxy }: Pick<ResolvedConfig, "trustProxy">): string | undefined {
  // The Node socket first: a runtime's own `ip` may already have followed X-Forwarded-For.
  const peer = event.runtime?.node?.req?.socket?.remoteAddress ?? event.req.ip;
  if (!peer) return undefined;
  if (trustProxy === false) return peer;
  // proxy-addr reads only these two fields, and the Web request has no IncomingMessage on other runtimes.
  const request = { headers: { "x-forwarded-for": event.req.headers.get("x-forwarded-for") ?? undefined }, socket: { remoteAddress: peer } };
  const chain = proxyaddr.all(request as unknown as IncomingMessage, trustOf(trustProxy));
  // A trusted proxy appends a real address; anything else (a port, a name) means the proxy passed the client's
  // text on, so the hop that handed it over is the closest address known.
  for (let hop = chain.length - 1; hop > 0; hop--) if (isIP(chain[hop]!)) return chain[hop];
  return peer;
}

function trustOf(trustProxy: Exclude<TrustProxy, false>): Trust {
  if (typeof trustProxy === "number") return (_address, hop) => hop < trustProxy;
  let trust = compiled.get(trustProxy);
  if (!trust) compiled.set(trustProxy, (trust = proxyaddr.compile([...trustProxy])));
  return trust;
}

/**
 * Whether the request reached us over HTTPS: its own URL says so, or (with `trustProxy`)
 * the trusted proxy that handed it over says so in `X-Forwarded-Proto`. A client's own
 * `X-Forwarded-Proto` is ignored when its peer is not a trusted proxy.
 *
 * @example
 * isHttps(event, service.config); // true behind a trusted TLS-terminating proxy
 */
export function isHttps(event: H3Event, { trustProxy }: Pick<ResolvedConfig, "trustProxy">): boolean {
  if (event.url.protocol === "https:") return true;
  if (trustProxy === false) return false;
  const peer = event.runtime?.node?.req?.socket?.remoteAddress ?? event.req.ip;
  if (!peer || !trustOf(trustProxy)(peer, 0)) return false;
  // The nearest proxy appends its own scheme last.
  const proto = event.req.headers.get("x-forwarded-proto")?.split(",").pop()?.trim().toLowerCase();
  return proto === "https";
}
