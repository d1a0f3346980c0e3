import { createServer, type RequestListener } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { H3 } from "h3";
import { toNodeHandler } from "h3/node";
import type { ChatService } from "../service.js";
import { ChatsvcError } from "../core/errors.js";
import { createWidgetApp } from "./widget/app.js";
import { DEMO_SLUG, demoPage } from "./widget/demo-page.js";
import { AnswerResponse } from "./answer-headers.js";
import { createApiApp, reportUnexpected, type ApiAppOptions } from "./app.js";
import { createConsoleApp } from "./console/app.js";
import { toErrorEnvelope } from "./errors.js";
import { getAndHead } from "./get-and-head.js";
import { createHealthHandler, HEALTH_PATH } from "./health.js";
import { listenOrigins, publicOrigin } from "./own-origins.js";
import { createRequestHandling } from "./request-guards.js";
import { whenQuiet } from "./when-quiet.js";

export interface StartServerOptions extends ApiAppOptions {
  /** TCP port; 0 picks a free one. Default 3000. */
  port?: number;
  /** Interface to bind. Default `127.0.0.1` (never all interfaces unless asked). */
  host?: string;
  /** Longest a request may take to arrive whole, in ms. Default 30 000. */
  requestTimeoutMs?: number;
  /** Longest in-flight requests get to finish on shutdown, in ms. Default 10 000. */
  shutdownTimeoutMs?: number;
  /**
   * After this long without a request, in ms, the service gives back memory it can do without
   * (`service.releaseMemory()`); once per quiet spell. 0 never does. Default 10 000.
   */
  releaseMemoryAfterMs?: number;
}

export interface ServerAppOptions extends ApiAppOptions {
  /** Origins of this server's own pages, where the demo bot works unconfigured. Default: `publicUrl`'s origin, else none. */
  ownOrigins?: readonly string[];
}

export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:3000`. */
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish (bounded), then resolves. */
  close(): Promise<void>;
}

/**
 * The app `chatsvc serve` runs: the API under `/api/v1`, the widget
 * (`/widget.js`, `/widget/{slug}/...`) and, at `/`, a page embedding the
 * `demo` chatbot's widget, which works on this server's own origins (`ownOrigins`) unconfigured;
 * the operator console at `/console/`;
 * `/healthz` for load balancers. Every answer carries `X-Request-Id` and is logged as one JSON line.
 */
export function createServerApp(service: ChatService, { ownOrigins, ...options }: ServerAppOptions = {}): H3 {
  const reporter = options.onUnexpectedError ?? reportUnexpected;
  // The config hook also catches what h3 rejects before any middleware runs (malformed URLs).
  const app = new H3({ onError: (error, event) => toErrorEnvelope(error, event, reporter) })
    .use(createRequestHandling(service, { logSink: options.logSink, onUnexpectedError: reporter }))
    .mount("/api/v1", createApiApp(service, options))
    .mount("/console", createConsoleApp(service, options))
    .mount("/", createWidgetApp(service, { ...options, sameOriginSlugs: [DEMO_SLUG], ...(ownOrigins && { ownOrigins }) }));
  // HEAD too (uptime monitors and load balancers ask that way), which the catch-all below would answer with a 404.
  getAndHead(app, "/", (event) => demoPage(event, service));
  // Health at the root, outside the API: no key, no rate limit.
  getAndHead(app, HEALTH_PATH, createHealthHandler(service));
  app.all("/**", (event) => {
    throw ChatsvcError.notFound(`No route for ${event.req.method} ${event.url.pathname}`);
  });
  return app;
}

/**
 * Serves the service over HTTP with a hardened Node server. Its own origins,
 * where the demo bot works unconfigured, are `publicUrl`'s when configured,
 * else those of the address it listens on (see {@link listenOrigins}).
 *
 * @example
 * const server = await startServer(service, { port: 3000 });
 * console.log(server.url);
 */
export async function startServer(
  service: ChatService,
  { port = 3000, host = "127.0.0.1", requestTimeoutMs = 30_000, shutdownTimeoutMs = 10_000, releaseMemoryAfterMs = 10_000, ...appOptions }: StartServerOptions = {},
): Promise<RunningServer> {
  // The app is built once listening: its own origins depend on the address and port the server got.
  let handle: RequestListener | undefined;
  // Plain node:http rather than listhen: listhen's http-shutdown throws an
  // uncaught TypeError (`_isIdle` of a null socket) when a client's connection
  // is gone before its request event, e.g. after a 413, which would crash serve.
  const server = createServer(
    {
      requestTimeout: requestTimeoutMs,
      headersTimeout: Math.min(requestTimeoutMs, 20_000),
      // Longer than the idle timeout of the load balancers and proxies in front (60 s in AWS's ALB and nginx's
      // upstream keep-alive): a server that closes an idle connection first races their next request on it,
      // which they answer with a 502. Node's 5 s default is shorter than every one of them.
      keepAliveTimeout: 72_000,
      // The default 30 s check would make the timeouts above much looser.
      connectionsCheckingInterval: Math.min(1_000, requestTimeoutMs),
      ServerResponse: AnswerResponse,
    },
    (req, res) => {
      unused.delete(req.socket);
      handle!(req, res);
    },
  );
  // Connections that have not sent a request yet: the spare ones browsers and undici open ahead of use (undici
  // opens one when a fetch is aborted). Node's closeIdleConnections() leaves them, so they held close() for the
  // whole shutdown timeout; close() ends them with the idle ones.
  const unused = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    unused.add(socket);
    socket.once("close", () => unused.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { address, port: actualPort } = server.address() as AddressInfo;
  const { publicUrl } = service.config;
  const ownOrigins = publicUrl ? [publicOrigin(publicUrl)] : listenOrigins({ address, port: actualPort, name: host });
  try {
    handle = toNodeHandler(createServerApp(service, { ...appOptions, ownOrigins }));
  } catch (error) {
    server.close();
    throw error;
  }
  // A quiet server keeps what a reply needs loaded (so the next one is as fast as a warm one) and gives back the rest.
  const stopWatching = releaseMemoryAfterMs > 0 ? whenQuiet(server, releaseMemoryAfterMs, () => service.releaseMemory()) : () => {};
  const displayHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${displayHost}:${actualPort}`,
    port: actualPort,
    async close() {
      stopWatching();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle keep-alive sockets would hold close() open; busy ones finish their request first, and are closed
      // once idle (checked again until all are gone: a kept-alive client may not close its side for minutes).
      server.closeIdleConnections();
      const idle = setInterval(() => server.closeIdleConnections(), 100);
      const forced = setTimeout(() => server.closeAllConnections(), shutdownTimeoutMs);
      forced.unref();
      // A new connection's first request may be in the kernel's buffer still: read in the next poll phase, it
      // is answered. Only connections that sent nothing by then are ended (a reset request is not retried).
      await afterNextPoll();
      for (const socket of unused) if (socket.bytesRead === 0) socket.destroy();
      await closed;
      clearInterval(idle);
      clearTimeout(forced);
    },
  };
}

/** Resolves after the event loop's next poll phase (two check phases: close() may run in a poll phase itself). */
const afterNextPoll = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
