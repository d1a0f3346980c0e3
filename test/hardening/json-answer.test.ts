// The outermost request pipeline sends JSON answers itself (sendJson): clients must get the very bytes h3 and srvx send.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { H3, type H3Event } from "h3";
import { toNodeHandler } from "h3/node";
import { afterEach, describe, expect, it } from "vitest";
import { ChatsvcError } from "../../src/core/errors.js";
import { AnswerResponse, setAnswerHeader } from "../../src/http/answer-headers.js";
import { createLogger } from "../../src/http/logger.js";
import { createRequestPipeline } from "../../src/http/pipeline.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** Answers that write their body separately (srvx's way), counted: the direct path ends with the body in one call. */
let wrote = 0;

function routes(app: H3): H3 {
  return app
    .get("/plain", (event) => {
      setAnswerHeader(event, "x-request-id", "req-1");
      return { success: true, data: { name: "Zoë", list: [1, 2] } };
    })
    .get("/array", () => [1, "two", { three: 3 }])
    .get("/headers", (event: H3Event) => {
      event.res.headers.set("cache-control", "no-store");
      event.res.headers.append("set-cookie", "a=1; Path=/");
      event.res.headers.append("set-cookie", "b=2; Path=/");
      event.res.headers.set("content-type", "application/vnd.test+json");
      event.res.status = 201;
      event.res.statusText = "Made\u0001 it";
      return { created: true };
    })
    .get("/empty", (event: H3Event) => {
      event.res.status = 204;
      return { ignored: true };
    })
    .get("/fails", () => {
      throw new ChatsvcError(405, "Not here", { headers: { allow: "POST" } });
    })
    .get("/text", () => "just text")
    .get("/json-method", () => ({ toJSON: () => ({ replaced: true }) }));
}

async function serve(sendsJson: boolean): Promise<number> {
  const logger = createLogger({ level: "silent" });
  const app = routes(new H3().use(createRequestPipeline({ logger, ip: () => undefined, onUnexpectedError: () => {}, sendsJson })));
  const handle = toNodeHandler(app);
  const server = createServer({ ServerResponse: AnswerResponse }, (req, res) => {
    const write = res.write;
    res.write = ((...args: unknown[]) => {
      wrote++;
      return (write as (...args: unknown[]) => boolean).apply(res, args);
    }) as typeof write;
    return handle(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/** The answer's bytes as sent, with the date and a new request id (the parts that differ) blanked. */
function rawAnswer(port: number, method: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const socket = connect(port, "127.0.0.1", () => socket.write(`${method} ${path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`));
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (out += chunk));
    socket.on("end", () => resolve(out.replace(/^date: .*$/im, "date: X").replace(/^x-request-id: [0-9a-f-]{36}\r$/im, "x-request-id: UUID\r")));
    socket.on("error", reject);
  });
}

const CASES: [string, string][] = [
  ["GET", "/plain"],
  ["HEAD", "/plain"],
  ["GET", "/array"],
  ["GET", "/headers"],
  ["HEAD", "/headers"],
  ["GET", "/empty"],
  ["GET", "/fails"],
  ["HEAD", "/fails"],
  ["GET", "/text"],
  ["GET", "/json-method"],
];

describe("JSON answers sent by the request pipeline", () => {
  it("are byte for byte what h3 sends: status, status text, every header, body; none for HEAD and 204", async () => {
    const [viaH3, direct] = [await serve(false), await serve(true)];
    for (const [method, path] of CASES) {
      const expected = await rawAnswer(viaH3, method, path);
      wrote = 0;
      expect(await rawAnswer(direct, method, path), `${method} ${path}`).toBe(expected);
      // Only the text answer takes h3's way (a separate write of the body); the rest are sent directly.
      if (method === "GET" && !["/text", "/empty"].includes(path)) expect(wrote, `${method} ${path}`).toBe(0);
    }
    expect(await rawAnswer(direct, "HEAD", "/plain")).toMatch(/^HTTP\/1\.1 200 \r\ncontent-type: application\/json;charset=UTF-8\r\nx-request-id: req-1\r\n/);
    expect(await rawAnswer(direct, "GET", "/headers")).toContain("HTTP/1.1 201 Made it\r\n");
  });
});
