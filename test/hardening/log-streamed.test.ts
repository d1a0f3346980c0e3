// A streamed answer is logged when its response closes, also when the client went away before the handler handed the stream over.
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { H3 } from "h3";
import { toNodeHandler } from "h3/node";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/http/logger.js";
import { createRequestPipeline } from "../../src/http/pipeline.js";

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

async function serve(lines: string[], received: () => void, handedOver: () => void): Promise<string> {
  const logger = createLogger({ level: "info", sink: (line) => lines.push(line) });
  const app = new H3().use(createRequestPipeline({ logger, ip: () => "127.0.0.1", onUnexpectedError: () => {} })).get("/stream", (event) => {
    const res = event.runtime!.node!.res!;
    received();
    // The stream comes once the response is closed (the client has gone), as a streamed reply may come a turn later.
    return new Promise<ReadableStream<Uint8Array>>((resolve) =>
      res.once("close", () =>
        setImmediate(() => {
          resolve(new ReadableStream({ start: (c) => c.close() }));
          setImmediate(handedOver);
        }),
      ),
    );
  });
  server = createServer(toNodeHandler(app));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
}

describe("the log line of a streamed answer", () => {
  it("is written when the client left before the stream was handed over", async () => {
    const lines: string[] = [];
    let got!: () => void;
    let done!: () => void;
    const received = new Promise<void>((resolve) => (got = resolve));
    const handedOver = new Promise<void>((resolve) => (done = resolve));
    const url = await serve(lines, () => got(), () => done());
    const req = request(url);
    req.on("error", () => {});
    req.end();
    await received;
    req.destroy();
    await handedOver;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ path: "/stream", aborted: true });
  });
});
