import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { isModelError } from "../../src/models/errors.js";
import { createOpenAIModel } from "../../src/models/openai.js";
import type { ChatRequest } from "../../src/models/types.js";

const request = (): ChatRequest => ({ messages: [{ role: "user", content: "Hi?" }], question: "Hi?", context: [] });

const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const END = `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`;

/** An OpenAI-compatible server that counts the TCP connections it accepts; `onRequest` may answer differently. */
async function startServer(onRequest?: (req: IncomingMessage, res: ServerResponse, socket: Socket, nth: number) => boolean) {
  const sockets: Socket[] = [];
  let requests = 0;
  const server: Server = createServer((req, res) => {
    const nth = ++requests;
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (raw += d));
    req.on("end", () => {
      if (onRequest?.(req, res, req.socket, nth)) return;
      const body = JSON.parse(raw) as { stream?: boolean };
      if (!body.stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content: "Hello there." }, finish_reason: "stop" }] }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk("Hello "));
      res.end(chunk("there.") + END);
    });
  });
  server.on("connection", (socket: Socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    sockets,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

async function streamed(model: ReturnType<typeof createOpenAIModel>): Promise<string> {
  let text = "";
  for await (const delta of model.stream(request())) text += delta;
  return text;
}

describe("OpenAI-compatible model calls over kept-alive connections", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it("consecutive streamed and plain calls share one connection, so a chat turn pays no new handshake", async () => {
    const server = await startServer();
    close = server.close;
    const model = createOpenAIModel({ model: "m", baseUrl: `${server.url}/v1` });
    expect(await streamed(model)).toBe("Hello there.");
    expect(await streamed(model)).toBe("Hello there.");
    expect((await model.chat(request())).text).toBe("Hello there.");
    expect(await streamed(model)).toBe("Hello there.");
    expect(server.sockets).toHaveLength(1);
  });

  it("a kept-alive connection the server reset is replaced: the call is sent again on a new one and answered", async () => {
    // The second request arrives on the kept connection; the server resets it without answering.
    const server = await startServer((_req, _res, socket, nth) => {
      if (nth !== 2) return false;
      socket.resetAndDestroy();
      return true;
    });
    close = server.close;
    const model = createOpenAIModel({ model: "m", baseUrl: `${server.url}/v1` });
    expect(await streamed(model)).toBe("Hello there.");
    expect(await streamed(model)).toBe("Hello there.");
    expect(server.sockets).toHaveLength(2);
  });

  it("a reset on a new connection is not retried: the call fails with the model error", async () => {
    let seen = 0;
    const server = await startServer((_req, _res, socket) => {
      seen++;
      socket.resetAndDestroy();
      return true;
    });
    close = server.close;
    const model = createOpenAIModel({ model: "m", baseUrl: `${server.url}/v1` });
    const error = await streamed(model).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isModelError(error) && error.kind).toBe("failed");
    expect(seen).toBe(1);
  });

  it("a 307 or 308 redirect is followed with the same method and body", async () => {
    const server = await startServer((req, res, _socket, nth) => {
      if (req.url !== "/old/v1/chat/completions") return false;
      res.writeHead(nth === 1 ? 307 : 308, { location: "/v1/chat/completions" });
      res.end();
      return true;
    });
    close = server.close;
    const model = createOpenAIModel({ model: "m", baseUrl: `${server.url}/old/v1` });
    expect(await streamed(model)).toBe("Hello there.");
    expect((await model.chat(request())).text).toBe("Hello there.");
  });

  it("a redirect to another origin is not followed: the provider's key stays with the provider", async () => {
    let keySeen = false;
    const elsewhere = await startServer((req) => {
      keySeen ||= req.headers.authorization !== undefined;
      return false;
    });
    const server = await startServer((_req, res) => {
      res.writeHead(307, { location: `${elsewhere.url}/v1/chat/completions` });
      res.end();
      return true;
    });
    close = async () => {
      await server.close();
      await elsewhere.close();
    };
    const model = createOpenAIModel({ model: "m", baseUrl: `${server.url}/v1`, apiKey: "sk-secret" });
    const error = await model.chat(request()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isModelError(error) && error.reason).toMatch(/HTTP 307/);
    expect(elsewhere.sockets).toHaveLength(0);
    expect(keySeen).toBe(false);
  });

  it("a redirect whose Location is not a URL fails as its status, and its connection serves the next call", async () => {
    const server = await startServer((_req, res, _socket, nth) => {
      if (nth > 1) return false;
      res.writeHead(307, { location: "http://[not-a-host" });
      res.end("moved");
      return true;
    });
    close = server.close;
    const model = createOpenAIModel({ model: "m", baseUrl: `${server.url}/v1` });
    const error = await model.chat(request()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isModelError(error) && error.reason).toMatch(/HTTP 307/);
    expect((await model.chat(request())).text).toBe("Hello there.");
    expect(server.sockets).toHaveLength(1);
  });
});
