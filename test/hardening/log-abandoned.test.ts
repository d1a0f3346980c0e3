// A request whose client went away is logged as such: a stream when its response closes (also when the client left
// before the handler handed the stream over), an answer never sent as 499 at `info` rather than as the failure the
// handler then ended with (a visitor leaving mid-reply cancels the model call: that is not a provider's fault).
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { H3, type H3Event } from "h3";
import { toNodeHandler } from "h3/node";
import { afterEach, describe, expect, it } from "vitest";
import { ChatsvcError } from "../../src/core/errors.js";
import { createLogger } from "../../src/http/logger.js";
import { createRequestPipeline } from "../../src/http/pipeline.js";

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A failure like a chat turn's when its model call is cancelled. */
const cancelled = () => new ChatsvcError(500, "The model provider failed; retry once");

interface Served {
  url: string;
  lines: string[];
  /** Resolves when a request reached its handler. */
  received: () => Promise<void>;
  /** Resolves when the handler has returned or thrown and the pipeline has seen it. */
  handled: () => Promise<void>;
}

async function serve(routes: (app: H3, received: () => void, handled: () => void) => H3): Promise<Served> {
  const lines: string[] = [];
  const logger = createLogger({ level: "info", sink: (line) => lines.push(line) });
  let got!: () => void;
  let done!: () => void;
  const receivedOnce = new Promise<void>((resolve) => (got = resolve));
  const handledOnce = new Promise<void>((resolve) => (done = resolve));
  const app = routes(new H3().use(createRequestPipeline({ logger, ip: () => "127.0.0.1", onUnexpectedError: () => {} })), () => got(), () => setImmediate(done));
  server = createServer(toNodeHandler(app));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, lines, received: () => receivedOnce, handled: () => handledOnce };
}

/** Sends a request and cuts it off once its handler has it. */
async function abandon(served: Served, path: string): Promise<void> {
  const req = request(served.url + path, { method: "POST" });
  req.on("error", () => {});
  req.end("{}");
  await served.received();
  req.destroy();
  await served.handled();
}

/** A handler that fails once its response has closed (the client is gone), as a chat turn does when its model call is cancelled. */
const failsAfterClose = (received: () => void, handled: () => void) => (event: H3Event) => {
  received();
  return new Promise<never>((_, reject) =>
    event.runtime!.node!.res!.once("close", () => {
      reject(cancelled());
      handled();
    }),
  );
};

describe("the log line of a request whose client went away", () => {
  it("of a stream: written when the client left before the handler handed the stream over", async () => {
    const served = await serve((app, received, handled) =>
      app.post("/stream", (event) => {
        const res = event.runtime!.node!.res!;
        received();
        // The stream comes once the response is closed (the client has gone), as a streamed reply may come a turn later.
        return new Promise<ReadableStream<Uint8Array>>((resolve) =>
          res.once("close", () =>
            setImmediate(() => {
              resolve(new ReadableStream({ start: (c) => c.close() }));
              handled();
            }),
          ),
        );
      }),
    );
    await abandon(served, "/stream");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(served.lines).toHaveLength(1);
    expect(JSON.parse(served.lines[0]!)).toMatchObject({ path: "/stream", aborted: true });
  });

  it("of an answer never sent: 499 at info, without the failure the handler ended with", async () => {
    const served = await serve((app, received, handled) => app.post("/answer", failsAfterClose(received, handled)));
    await abandon(served, "/answer");
    expect(served.lines).toHaveLength(1);
    const line = JSON.parse(served.lines[0]!);
    expect(line).toMatchObject({ level: "info", path: "/answer", status: 499, aborted: true });
    expect(line).not.toHaveProperty("error");
  });

  it("is not claimed for a failure the client is still waiting for", async () => {
    const served = await serve((app, received, handled) =>
      app.post("/answer", () => {
        received();
        handled();
        throw cancelled();
      }),
    );
    const res = await fetch(`${served.url}/answer`, { method: "POST", body: "{}" });
    expect(res.status).toBe(500);
    await served.handled();
    expect(served.lines).toHaveLength(1);
    const line = JSON.parse(served.lines[0]!);
    expect(line).toMatchObject({ level: "error", status: 500, error: { message: "The model provider failed; retry once" } });
    expect(line).not.toHaveProperty("aborted");
  });
});
