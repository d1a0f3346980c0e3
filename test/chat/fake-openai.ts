import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type FakeMode = "ok" | "error" | "hang" | "empty" | "garbage" | "slow-stream";

/**
 * A protocol-level fake of an OpenAI-compatible server (`POST /v1/chat/completions`)
 * on 127.0.0.1, for driving the chat pipeline into each kind of provider failure.
 */
export interface FakeOpenAI {
  /** API root to pass as `openaiBaseUrl`. */
  baseUrl: string;
  mode: FakeMode;
  /** The reply text in `ok` and `slow-stream` modes. */
  reply: string;
  /** Requests received. */
  calls: number;
  /** Requests whose client went away before the answer was complete. */
  aborted: number;
  /** Delay between streamed deltas, in ms. */
  deltaDelayMs: number;
  close(): Promise<void>;
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const open = new Set<ServerResponse>();
  const fake: FakeOpenAI = { baseUrl: "", mode: "ok", reply: "Fake **answer** about Widgetron.", calls: 0, aborted: 0, deltaDelayMs: 20, close: async () => {} };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    fake.calls++;
    const stream = (JSON.parse(raw) as { stream?: boolean }).stream === true;
    let finished = false;
    res.on("close", () => {
      if (!finished) fake.aborted++;
      open.delete(res);
    });
    open.add(res);
    const complete = (body: string, status = 200, type = "application/json") => {
      finished = true;
      res.writeHead(status, { "content-type": type }).end(body);
    };
    const streamReply = async (delayMs: number) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const piece of fake.reply.match(/\S+\s*/g) ?? []) {
        if (res.destroyed) return;
        res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: piece } }] })}\n\n`);
        await new Promise((r) => setTimeout(r, delayMs));
      }
      finished = true;
      res.end(`data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`);
    };
    const completion = (content: string) => JSON.stringify({ choices: [{ message: { role: "assistant", content }, finish_reason: "stop" }] });
    switch (fake.mode) {
      case "error":
        return complete(JSON.stringify({ error: { message: "model overloaded" } }), 500);
      case "hang":
        return; // never answers: only the caller's timeout ends it
      case "empty":
        return complete(completion(""));
      case "garbage":
        return complete("<html>not json</html>");
      case "ok":
        return stream ? streamReply(0) : complete(completion(fake.reply));
      case "slow-stream":
        return streamReply(fake.deltaDelayMs);
    }
  };

  const server: Server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = async () => {
    for (const res of open) res.destroy();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // The client's idle keep-alive sockets would otherwise hold close() for seconds.
    server.closeAllConnections();
    await closed;
  };
  return fake;
}
