import { Ollama } from "ollama";
import { afterEach, describe, expect, it } from "vitest";
import { fakeEmbedding, type FakeServer } from "../fixtures/fake-http.js";
import { startFakeOllama } from "../fixtures/fake-ollama.js";
import { startFakeOpenAI } from "../fixtures/fake-openai.js";

// The embedding endpoints of the fakes are reused by the embedder tests: they
// must speak the wire format the real clients accept.

const fakes: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

const cosine = (a: number[], b: number[]) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);

describe("fake embedding endpoints", () => {
  it("fakeEmbedding is unit length, deterministic, and closer for texts sharing words", () => {
    const a = fakeEmbedding("refund policy for orders", 32);
    expect(Math.hypot(...a)).toBeCloseTo(1, 6);
    expect(fakeEmbedding("refund policy for orders", 32)).toEqual(a);
    expect(cosine(a, fakeEmbedding("what is the refund policy", 32))).toBeGreaterThan(cosine(a, fakeEmbedding("shipping to Mars", 32)));
  });

  it("Ollama /api/embed answers the ollama client with one vector per input, and fails on request", async () => {
    const ollama = await startFakeOllama({ dimensions: 8 });
    fakes.push(ollama);
    const client = new Ollama({ host: ollama.url });
    const { embeddings } = await client.embed({ model: "nomic-embed-text", input: ["alpha", "beta"] });
    expect(embeddings).toEqual([fakeEmbedding("alpha", 8), fakeEmbedding("beta", 8)]);
    expect(ollama.requests[0]!.body).toEqual({ model: "nomic-embed-text", input: ["alpha", "beta"] });
    ollama.behave({ embed: "fail" });
    await expect(client.embed({ model: "nomic-embed-text", input: ["alpha"] })).rejects.toMatchObject({ name: "ResponseError", status_code: 500 });
  });

  it("OpenAI /v1/embeddings answers float and base64 vectors in input order", async () => {
    const openai = await startFakeOpenAI({ dimensions: 4, apiKey: "sk-test" });
    fakes.push(openai);
    const post = (body: unknown) =>
      fetch(`${openai.baseUrl}/embeddings`, { method: "POST", headers: { authorization: "Bearer sk-test", "content-type": "application/json" }, body: JSON.stringify(body) });
    const floats = await (await post({ model: "text-embedding-3-small", input: ["alpha", "beta"] })).json();
    expect(floats.data).toEqual([
      { object: "embedding", index: 0, embedding: fakeEmbedding("alpha", 4) },
      { object: "embedding", index: 1, embedding: fakeEmbedding("beta", 4) },
    ]);
    const packed = await (await post({ model: "text-embedding-3-small", input: "alpha", encoding_format: "base64" })).json();
    const bytes = Buffer.from(packed.data[0].embedding, "base64");
    const decoded = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    decoded.forEach((v, i) => expect(v).toBeCloseTo(fakeEmbedding("alpha", 4)[i]!, 6));
    openai.behave({ embed: "malformed" });
    expect((await (await post({ model: "m", input: ["x"] })).json()).data).toBeUndefined();
  });
});
