import type { Server } from "node:http";
import { H3 } from "h3";
import { toNodeHandler } from "h3/node";
import { listen } from "listhen";
import type { ChatService } from "../service.js";
import { ChatsvcError } from "../core/errors.js";
import { createApiApp, envelopeErrors, type ApiAppOptions } from "./app.js";

export interface StartServerOptions extends ApiAppOptions {
  /** TCP port; 0 picks a free one. Default 3000. */
  port?: number;
  /** Interface to bind. Default `127.0.0.1` (never all interfaces unless asked). */
  host?: string;
  /** Longest a request may take to arrive whole, in ms. Default 30 000. */
  requestTimeoutMs?: number;
  /** Longest in-flight requests get to finish on shutdown, in ms. Default 10 000. */
  shutdownTimeoutMs?: number;
}

export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:3000`. */
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish (bounded), then resolves. */
  close(): Promise<void>;
}

/** The app `chatsvc serve` runs: the API under `/api/v1`. */
export function createServerApp(service: ChatService, options: ApiAppOptions = {}): H3 {
  const app = new H3().use(envelopeErrors(options.onUnexpectedError)).mount("/api/v1", createApiApp(service, options));
  app.all("/**", (event) => {
    throw ChatsvcError.notFound(`No route for ${event.req.method} ${event.url.pathname}`);
  });
  return app;
}

/**
 * Serves the service over HTTP with a hardened Node server.
 *
 * @example
 * const server = await startServer(service, { port: 3000 });
 * console.log(server.url);
 */
export async function startServer(
  service: ChatService,
  { port = 3000, host = "127.0.0.1", requestTimeoutMs = 30_000, shutdownTimeoutMs = 10_000, ...appOptions }: StartServerOptions = {},
): Promise<RunningServer> {
  const app = createServerApp(service, appOptions);
  // listhen 1.x needs a Node handler; with this port option it refuses to move
  // silently to another port when the one asked for is taken.
  const listener = await listen(toNodeHandler(app), {
    port: port === 0 ? { port: 0, random: true } : { port, random: false, alternativePortRange: [] as unknown as [number, number] },
    hostname: host,
    showURL: false,
    autoClose: false,
    isTest: true,
  });
  const server = listener.server as Server;
  server.requestTimeout = requestTimeoutMs;
  server.headersTimeout = Math.min(requestTimeoutMs, 20_000);
  server.keepAliveTimeout = 5_000;
  const actualPort = listener.address.port;
  const displayHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${displayHost}:${actualPort}`,
    port: actualPort,
    async close() {
      const forced = setTimeout(() => server.closeAllConnections(), shutdownTimeoutMs);
      forced.unref();
      await listener.close();
      clearTimeout(forced);
    },
  };
}
