import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a receiver got. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
  at: number;
}

/** How the receiver answers the n-th request (0-based): a status, extra headers, a delay, or no answer at all. */
export type Reply = { status?: number; headers?: Record<string, string>; delayMs?: number; hang?: boolean };

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Resolves once `count` requests arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 that records every request and answers as
 * `reply` says (default 200).
 */
export async function startReceiver(reply: (n: number, req: Received) => Reply = () => ({})): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const entry: Received = { method: req.method!, path: req.url!, headers: req.headers, body, json, at: Date.now() };
      const n = received.push(entry) - 1;
      for (const w of [...waiters]) if (received.length >= w.count) w.resolve();
      const { status = 200, headers = {}, delayMs = 0, hang = false } = reply(n, entry);
      if (hang) {
        hanging.push(res);
        return;
      }
      const answer = () => {
        res.writeHead(status, { "content-type": "text/plain", ...headers });
        res.end("ok");
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    waitFor(count, timeoutMs = 5_000) {
      if (received.length >= count) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver: ${received.length} of ${count} requests after ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(received);
          },
        });
      });
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a truthy value (or throws after `timeoutMs`). */
export async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 5_000, stepMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("eventually: condition not met in time");
    await sleep(stepMs);
  }
}
