import { createServer } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ChatsvcError } from "../../src/core/errors.js";
import { isModelError, MODEL_FAILED_MESSAGE, type ModelError } from "../../src/models/errors.js";
import { createOllamaModel } from "../../src/models/ollama.js";
import { createOpenAIModel } from "../../src/models/openai.js";
import type { ChatModel, ChatRequest } from "../../src/models/types.js";
import { DEFAULT_REPLY, type FakeServer } from "../fixtures/fake-http.js";
import { startFakeOllama } from "../fixtures/fake-ollama.js";
import { startFakeOpenAI } from "../fixtures/fake-openai.js";

/** One provider as the contract suite sees it: its fake server and how to point a model at an address. */
interface ProviderCase {
  name: string;
  spec: string;
  chatPath: string;
  start(): Promise<FakeServer>;
  /** The model against the fake, or against a bare `http://host:port` address. */
  model(target: FakeServer | string, options?: { timeoutMs?: number }): ChatModel;
}

const providers: ProviderCase[] = [
  {
    name: "ollama",
    spec: "ollama:llama3.2",
    chatPath: "/api/chat",
    start: () => startFakeOllama(),
    model: (target, { timeoutMs } = {}) =>
      createOllamaModel({ model: "llama3.2", host: typeof target === "string" ? target : target.url, ...(timeoutMs !== undefined && { timeoutMs }) }),
  },
  {
    name: "openai",
    spec: "openai:gpt-4o-mini",
    chatPath: "/v1/chat/completions",
    start: () => startFakeOpenAI({ apiKey: "sk-test" }),
    model: (target, { timeoutMs } = {}) =>
      createOpenAIModel({
        model: "gpt-4o-mini",
        baseUrl: `${typeof target === "string" ? target : target.url}/v1`,
        apiKey: "sk-test",
        ...(timeoutMs !== undefined && { timeoutMs }),
      }),
  },
];

const request = (signal?: AbortSignal): ChatRequest => ({
  messages: [
    { role: "system", content: "Answer from <knowledge>the sky is blue</knowledge>." },
    { role: "user", content: "What colour is the sky?" },
  ],
  question: "What colour is the sky?",
  context: [],
  ...(signal && { signal }),
});

async function collect(stream: AsyncIterable<string>): Promise<string[]> {
  const deltas: string[] = [];
  for await (const delta of stream) deltas.push(delta);
  return deltas;
}

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isModelError(error)) throw new Error(`expected a ModelError, got ${String(error)}`);
  return error;
}

/** An address where nothing listens: a port taken and released again. */
async function deadAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

describe.each(providers)("provider contract: $name", (provider) => {
  let fake: FakeServer;
  beforeEach(async () => {
    fake = await provider.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  it("chat sends the prompt messages to the server and returns its reply, the spec and token usage", async () => {
    const result = await provider.model(fake).chat(request());
    expect(result.text).toBe(DEFAULT_REPLY);
    expect(result.model).toBe(provider.spec);
    expect(result.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(result.usage?.completion_tokens).toBeGreaterThan(0);
    const sent = fake.requests.filter((r) => r.path === provider.chatPath);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({ model: provider.spec.split(":")[1], messages: request().messages, stream: false });
  });

  it("stream yields several deltas whose concatenation is the text chat returns", async () => {
    const model = provider.model(fake);
    const { text } = await model.chat(request());
    const deltas = await collect(model.stream(request()));
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join("")).toBe(text);
    expect(fake.requests.at(-1)!.body.stream).toBe(true);
  });

  it("aborting the signal mid-stream fails the stream as aborted and closes the upstream request", async () => {
    fake.behave({ deltaDelayMs: 30 });
    const controller = new AbortController();
    const iterator = provider.model(fake).stream(request(controller.signal))[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    controller.abort();
    const error = await failure(iterator.next());
    expect(error.kind).toBe("aborted");
    const cut = await fake.waitForAbort(provider.chatPath);
    expect(cut.aborted).toBe(true);
  });

  it("a consumer that stops reading closes the upstream request", async () => {
    fake.behave({ deltaDelayMs: 30 });
    for await (const delta of provider.model(fake).stream(request())) {
      expect(delta).not.toBe("");
      break;
    }
    await fake.waitForAbort(provider.chatPath);
  });

  it("aborting a non-streaming call closes the upstream request", async () => {
    fake.behave({ chat: "hang" });
    const controller = new AbortController();
    const pending = failure(provider.model(fake).chat(request(controller.signal)));
    await fake.waitFor(() => fake.requests.length === 1);
    controller.abort();
    expect((await pending).kind).toBe("aborted");
    await fake.waitForAbort(provider.chatPath);
  });

  it("an HTTP 500 becomes the model error: status 500, the spec's message, the provider's status kept for logs", async () => {
    fake.behave({ chat: "fail" });
    const model = provider.model(fake);
    for (const call of [model.chat(request()), collect(model.stream(request()))]) {
      const error = await failure(call);
      expect(error).toBeInstanceOf(ChatsvcError);
      expect(error.status).toBe(500);
      expect(error.message).toBe(MODEL_FAILED_MESSAGE);
      expect(error.kind).toBe("failed");
      expect(error.providerStatus).toBe(500);
      expect(error.model).toBe(provider.spec);
    }
  });

  /*
   * These two fake the clock the time limit runs on (setTimeout only; sockets stay real) and move it
   * past timeoutMs once the fake server has the request, or the first delta has arrived. With a real
   * clock, a busy machine let the limit pass before the request reached the server or before the
   * first delta, and the tests failed on what they did not test.
   */
  it("a hanging server fails with a timeout after timeoutMs, for chat and stream, and the request is abandoned", async () => {
    fake.behave({ chat: "hang" });
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const model = provider.model(fake, { timeoutMs: 150 });
      const chat = failure(model.chat(request()));
      await fake.waitFor(() => fake.requests.length === 1);
      vi.advanceTimersByTime(149);
      const stream = failure(collect(model.stream(request())));
      await fake.waitFor(() => fake.requests.length === 2);
      expect(fake.requests.filter((r) => r.aborted)).toHaveLength(0);
      vi.advanceTimersByTime(1);
      expect((await chat).kind).toBe("timeout");
      vi.advanceTimersByTime(150);
      expect((await stream).kind).toBe("timeout");
      await fake.waitFor(() => fake.requests.filter((r) => r.aborted).length === 2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a stream that stalls after its first delta times out", async () => {
    fake.behave({ chat: "stall" });
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const stream = provider.model(fake, { timeoutMs: 150 }).stream(request())[Symbol.asyncIterator]();
      expect(await stream.next()).toEqual({ done: false, value: expect.any(String) });
      vi.advanceTimersByTime(150);
      expect((await failure(stream.next())).kind).toBe("timeout");
    } finally {
      vi.useRealTimers();
    }
  });

  it("a timeout signal from the caller counts as a timeout, not a cancellation", async () => {
    fake.behave({ chat: "hang" });
    const error = await failure(provider.model(fake).chat(request(AbortSignal.timeout(100))));
    expect(error.kind).toBe("timeout");
  });

  it("malformed, empty and truncated answers become the model error, never a crash", async () => {
    const model = provider.model(fake);
    fake.behave({ chat: "malformed" });
    expect((await failure(model.chat(request()))).kind).toBe("malformed");
    expect((await failure(collect(model.stream(request())))).kind).toBe("malformed");
    fake.behave({ chat: "empty" });
    expect((await failure(model.chat(request()))).kind).toBe("malformed");
    expect((await failure(collect(model.stream(request())))).kind).toBe("malformed");
    fake.behave({ chat: "truncated" });
    expect((await failure(collect(model.stream(request())))).kind).toBe("malformed");
  });

  it("an unreachable server fails with the model error", async () => {
    const error = await failure(provider.model(await deadAddress()).chat(request()));
    expect(error.kind).toBe("failed");
    expect(error.reason).toMatch(/ECONNREFUSED|fetch failed/);
  });
});
