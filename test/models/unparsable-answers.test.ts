import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startServer } from "../../src/http/server.js";
import { isModelError, type ModelError } from "../../src/models/errors.js";
import { createOllamaModel } from "../../src/models/ollama.js";
import { createOpenAIModel } from "../../src/models/openai.js";
import type { ChatModel } from "../../src/models/types.js";
import { ingestDocs, openConversation } from "../chat/helpers.js";
import { startFakeHttp, type FakeServer, type RecordedRequest } from "../fixtures/fake-http.js";
import { request, startHarness } from "../support/harness.js";

/*
 * A model server that answers something chatsvc cannot parse, echoing the
 * visitor's words (as broken gateways and debug builds do): the error reason,
 * which goes to the logs, must say what went wrong without repeating them.
 */

const cleanups: (() => Promise<unknown> | unknown)[] = [];
/** Everything written to the console meanwhile (client libraries print there), still printed. */
let consoleOutput: string[];
beforeEach(() => {
  consoleOutput = [];
  for (const method of ["log", "warn", "error", "info", "debug"] as const) {
    const original = console[method].bind(console);
    const spy = vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      consoleOutput.push(args.map(String).join(" "));
      original(...args);
    });
    cleanups.push(() => spy.mockRestore());
  }
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  expect(consoleOutput.join("\n")).not.toMatch(VISITOR_WORDS);
});

const SECRET = "my card is 4111 1111 1111 1111";
/** Any piece of it: a JSON parser's message quotes about ten characters around the error. */
const VISITOR_WORDS = /my card|card is|4111/;
type Kind = "openai" | "ollama";

/** Almost JSON, broken right where the visitor's words start, so a parser's message would quote them. */
function echo(request: RecordedRequest): string {
  const content = String(request.body?.messages?.at(-1)?.content ?? "");
  return `{"answer": ${content.slice(content.indexOf("my card"))}}`;
}

async function brokenServer(): Promise<{ fake: FakeServer; answers: string[] }> {
  const answers: string[] = [];
  const fake = await startFakeHttp((req, res) => {
    const text = echo(req);
    answers.push(text);
    if (req.body?.stream === true) {
      const ollama = req.path === "/api/chat";
      res.writeHead(200, { "content-type": ollama ? "application/x-ndjson" : "text/event-stream" });
      res.end(ollama ? `${text}\n` : `data: ${text}\n\n`);
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(text);
  });
  cleanups.push(() => fake.close());
  return { fake, answers };
}

const sha12 = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 12);
const REASON = (answer: string) => `Answer is not JSON (${answer.length} characters, sha256 ${sha12(answer)})`;

describe("a model answer that cannot be parsed", () => {
  for (const kind of ["openai", "ollama"] as const) {
    it(`is logged without the visitor's words (${kind}, JSON send through the server's log)`, async () => {
      const { fake, answers } = await brokenServer();
      const h = await startHarness(kind === "openai" ? { chatModel: "openai:fake", openaiBaseUrl: `${fake.url}/v1` } : { chatModel: "ollama:fake", ollamaHost: fake.url });
      cleanups.push(() => h.close());
      await ingestDocs(h.service);
      const lines: string[] = [];
      const server = await startServer(h.service, { port: 0, logSink: (line) => lines.push(line) });
      cleanups.push(() => server.close());
      const conversation = await openConversation(h);
      const res = await request(`${server.url}/api/v1/chatbots/demo/conversations/${conversation}/messages`, { key: h.tenant.key.key, json: { message: `How do I install Widgetron? ${SECRET}` } });
      expect(res.status).toBe(500);
      await expect.poll(() => lines.length).toBe(1);
      const line = JSON.parse(lines[0]!);
      expect(answers[0]).toContain(SECRET);
      expect(line.error).toMatchObject({ kind: "malformed", model: `${kind}:fake` });
      expect(line.error.reason).toBe(REASON(answers[0]!));
      expect(lines[0]).not.toMatch(VISITOR_WORDS);
    });
  }

  const models: Record<Kind, (fake: FakeServer) => ChatModel> = {
    openai: (fake) => createOpenAIModel({ model: "fake", baseUrl: `${fake.url}/v1` }),
    ollama: (fake) => createOllamaModel({ model: "fake", host: fake.url }),
  };
  for (const kind of ["openai", "ollama"] as const) {
    it(`gives a streamed call's error a reason without the visitor's words (${kind})`, async () => {
      const { fake, answers } = await brokenServer();
      const model = models[kind](fake);
      let error: ModelError | undefined;
      try {
        for await (const _ of model.stream({ messages: [{ role: "user", content: `Question: ${SECRET}` }], question: SECRET, context: [] }));
      } catch (e) {
        if (isModelError(e)) error = e;
      }
      expect(answers[0]).toContain(SECRET);
      expect(error).toMatchObject({ kind: "malformed" });
      expect(error!.reason).toBe(REASON(answers[0]!));
      expect(error!.reason).not.toMatch(VISITOR_WORDS);
    });
  }
});
