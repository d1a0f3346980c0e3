import { afterEach, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/core/config.js";
import { ChatsvcError } from "../../src/core/errors.js";
import { isModelError } from "../../src/models/errors.js";
import { createExtractiveModel } from "../../src/models/extractive.js";
import { createModels, parseModelSpec } from "../../src/models/registry.js";
import type { ChatRequest } from "../../src/models/types.js";
import type { FakeServer } from "../fixtures/fake-http.js";
import { startFakeOllama } from "../fixtures/fake-ollama.js";
import { startFakeOpenAI } from "../fixtures/fake-openai.js";

const request: ChatRequest = { messages: [{ role: "user", content: "Hi" }], question: "Hi", context: [] };

const fakes: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

describe("parseModelSpec", () => {
  it("splits provider and model at the first colon, so Ollama tags survive", () => {
    expect(parseModelSpec("extractive")).toEqual({ provider: "extractive" });
    expect(parseModelSpec("ollama:llama3.2:1b")).toEqual({ provider: "ollama", model: "llama3.2:1b" });
    expect(parseModelSpec("openai:gpt-4o-mini")).toEqual({ provider: "openai", model: "gpt-4o-mini" });
    expect(parseModelSpec("gpt-4o")).toBeUndefined();
    expect(parseModelSpec("ollama:")).toBeUndefined();
  });
});

describe("createModels", () => {
  it("points ollama:<model> at OLLAMA_HOST from the environment", async () => {
    const ollama = await startFakeOllama({ reply: "from ollama", models: ["llama3.2:1b"] });
    fakes.push(ollama);
    const models = createModels(resolveConfig({ env: { OLLAMA_HOST: ollama.url } }));
    const result = await models.get("ollama:llama3.2:1b").chat(request);
    expect(result).toMatchObject({ text: "from ollama", model: "ollama:llama3.2:1b" });
    expect(ollama.requests[0]!.body.model).toBe("llama3.2:1b");
  });

  it("points openai:<model> at OPENAI_BASE_URL with OPENAI_API_KEY as a Bearer token", async () => {
    const openai = await startFakeOpenAI({ reply: "from openai", apiKey: "sk-right" });
    fakes.push(openai);
    const models = createModels(resolveConfig({ env: { OPENAI_BASE_URL: `${openai.baseUrl}/`, OPENAI_API_KEY: "sk-right" } }));
    expect(await models.get("openai:gpt-4o-mini").chat(request)).toMatchObject({ text: "from openai", model: "openai:gpt-4o-mini" });
    expect(openai.requests[0]!.headers.authorization).toBe("Bearer sk-right");
  });

  it("explicit options win over the environment", async () => {
    const ollama = await startFakeOllama({ reply: "the option's server" });
    fakes.push(ollama);
    const models = createModels(resolveConfig({ ollamaHost: ollama.url, env: { OLLAMA_HOST: "http://127.0.0.1:1" } }));
    expect((await models.get("ollama:llama3.2").chat(request)).text).toBe("the option's server");
  });

  it("applies modelTimeoutMs to every call", async () => {
    const ollama = await startFakeOllama({ chat: "hang" });
    fakes.push(ollama);
    const models = createModels(resolveConfig({ ollamaHost: ollama.url, modelTimeoutMs: 100 }));
    const error = await models.get("ollama:llama3.2").chat(request).catch((e: unknown) => e);
    expect(isModelError(error) && error.kind).toBe("timeout");
  });

  it("reuses one model per spec and refuses an unknown spec with a clear error", () => {
    const models = createModels(resolveConfig({ env: {} }));
    expect(models.get("extractive")).toBe(models.get("extractive"));
    expect(models.get("ollama:a")).not.toBe(models.get("ollama:b"));
    const error = (() => {
      try {
        models.get("claude-3");
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ChatsvcError);
    expect((error as ChatsvcError).message).toBe('Unknown chat model "claude-3": use extractive, ollama:<model> or openai:<model>');
  });
});

describe("provider specifics", () => {
  it("openai: a wrong API key gives the model error with the provider's 401 kept for logs", async () => {
    const openai = await startFakeOpenAI({ apiKey: "sk-right" });
    fakes.push(openai);
    const models = createModels(resolveConfig({ openaiBaseUrl: openai.baseUrl, openaiApiKey: "sk-wrong", env: {} }));
    const error = await models.get("openai:gpt-4o-mini").chat(request).catch((e: unknown) => e);
    expect(isModelError(error) && [error.kind, error.providerStatus, error.reason]).toEqual(["failed", 401, "HTTP 401: Incorrect API key provided."]);
  });

  it("openai: a server that answers a stream request with one JSON completion still gives the reply", async () => {
    const openai = await startFakeOpenAI({ reply: "one piece", ignoreStream: true });
    fakes.push(openai);
    const models = createModels(resolveConfig({ openaiBaseUrl: openai.baseUrl, env: {} }));
    const deltas: string[] = [];
    for await (const d of models.get("openai:local").stream(request)) deltas.push(d);
    expect(deltas).toEqual(["one piece"]);
    expect(openai.requests[0]!.body.stream).toBe(true);
    expect(openai.requests[0]!.headers.authorization).toBeUndefined();
  });

  it("ollama: a model that is not pulled gives the model error naming it", async () => {
    const ollama = await startFakeOllama({ models: ["llama3.2"] });
    fakes.push(ollama);
    const models = createModels(resolveConfig({ ollamaHost: ollama.url, env: {} }));
    const error = await models.get("ollama:mistral").chat(request).catch((e: unknown) => e);
    expect(isModelError(error) && [error.providerStatus, error.reason]).toEqual([404, 'HTTP 404: model "mistral" not found, try pulling it first']);
  });

  it("extractive: the stream's deltas concatenate to chat's text", async () => {
    const model = createExtractiveModel();
    const context = [
      { chunk_id: 1, document_id: 1, content: "Refunds take 14 days. Shipping is free in the EU.", heading: "", name: "faq.md", type: "file", url: null, score: 1 },
    ];
    const withContext = { ...request, question: "How long do refunds take?", context };
    const { text } = await model.chat(withContext);
    expect(text).toContain("Refunds take 14 days.");
    const deltas: string[] = [];
    for await (const d of model.stream(withContext)) deltas.push(d);
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join("")).toBe(text);
  });
});
