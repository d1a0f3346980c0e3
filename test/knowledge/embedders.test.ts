import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHashEmbedder, HASH_DIMENSION } from "../../src/knowledge/embedders/hash.js";
import { dot } from "../../src/knowledge/embedders/index.js";
import { createChatService, type ChatService } from "../../src/service.js";
import type { FakeServer } from "../fixtures/fake-http.js";
import { startFakeOllama } from "../fixtures/fake-ollama.js";
import { startFakeOpenAI } from "../fixtures/fake-openai.js";
import { tempDir } from "../support/harness.js";
import { sqliteOf } from "../support/sqlite.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
function track<T extends FakeServer | ChatService>(thing: T): T {
  cleanups.push(() => thing.close());
  return thing;
}

describe("hash embedder", () => {
  it("is deterministic, unit length, and closer for related texts", async () => {
    const embedder = createHashEmbedder();
    const [a, a2, related, unrelated, empty] = await embedder.embed([
      "How do I create an API key?",
      "How do I create an API key?",
      "Creating API keys for your account",
      "The weather in Lisbon is sunny",
      "",
    ]);
    expect(a!.length).toBe(HASH_DIMENSION);
    expect(embedder.dimension).toBe(HASH_DIMENSION);
    expect(Math.sqrt(dot(a!, a!))).toBeCloseTo(1, 5);
    expect([...a2!]).toEqual([...a!]);
    expect(dot(a!, related!)).toBeGreaterThan(0.4);
    expect(dot(a!, related!)).toBeGreaterThan(dot(a!, unrelated!) + 0.3);
    expect(dot(empty!, empty!)).toBe(0);
  });
});

describe("embedder servers and switching", () => {
  const docs = [
    { name: "keys", content: "# API keys\nCreate API keys with chatsvc keys create." },
    { name: "hooks", content: "# Webhooks\nWebhooks are signed with HMAC-SHA256." },
  ];

  async function open(dbFile: string, options: Parameters<typeof createChatService>[0] = {}) {
    return track(await createChatService({ env: {}, db: dbFile, ...options }));
  }

  it("refuses another embedder until reindex, then searches with the new vectors", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const dbFile = join(dir, "kb.db");
    const first = await open(dbFile);
    await first.bootstrap({ ingestDocs: false });
    await first.knowledge.ingest("demo", docs);
    await first.close();

    const openai = track(await startFakeOpenAI({ dimensions: 16, apiKey: "sk-test" }));
    const switched = await open(dbFile, { embedModel: "openai:text-embedding-3-small", openaiBaseUrl: openai.baseUrl, openaiApiKey: "sk-test" });
    const refusal = { status: 409, message: expect.stringContaining("chatsvc kb reindex") };
    await expect(switched.knowledge.search("demo", "API keys")).rejects.toMatchObject(refusal);
    await expect(switched.knowledge.ingest("demo", [{ name: "more", content: "More text." }])).rejects.toMatchObject(refusal);
    expect(await switched.knowledge.list("demo")).toHaveLength(2);

    // Reindexing one chatbot after a switch redoes every chatbot.
    expect(await switched.knowledge.reindex("demo")).toMatchObject({ chunks: 2 });
    expect(openai.requests.filter((r) => r.path === "/v1/embeddings")).toHaveLength(1);
    expect(openai.requests[0]!.body).toMatchObject({ model: "text-embedding-3-small", input: ["API keys\nCreate API keys with chatsvc keys create.", "Webhooks\nWebhooks are signed with HMAC-SHA256."] });
    const sqlite = sqliteOf(switched);
    expect(JSON.parse((sqlite.prepare("SELECT value FROM settings WHERE key = 'knowledge.embedder'").get() as { value: string }).value)).toEqual({
      spec: "openai:text-embedding-3-small",
      dimension: 16,
    });
    const [hit] = await switched.knowledge.search("demo", "How are webhooks signed?");
    expect(hit).toMatchObject({ name: "hooks" });
    expect(await switched.knowledge.ingest("demo", [{ name: "more", content: "# More\nMore text about keys." }])).toMatchObject({ added: 1 });
    await switched.close();

    // And back to the offline default.
    const back = await open(dbFile);
    await expect(back.knowledge.search("demo", "API keys")).rejects.toMatchObject(refusal);
    expect(await back.knowledge.reindex()).toMatchObject({ chunks: 3 });
    expect((await back.knowledge.search("demo", "How are webhooks signed?"))[0]).toMatchObject({ name: "hooks" });
  });

  it("batches Ollama embeddings, and an embedding failure stores nothing", async () => {
    const { ollama, service } = await withOllamaEmbedder();
    const many = Array.from({ length: 40 }, (_, i) => ({ name: `doc-${i}`, content: `# Doc ${i}\nParagraph number ${i} about topic ${i}.` }));
    expect(await service.knowledge.ingest("demo", many)).toMatchObject({ added: 40, chunks: 40 });
    const embeds = ollama.requests.filter((r) => r.path === "/api/embed");
    expect(embeds.map((r) => r.body.input.length)).toEqual([32, 8]);
    expect((await service.knowledge.search("demo", "paragraph number 7 topic 7"))[0]).toMatchObject({ name: "doc-7" });

    ollama.behave({ embed: "fail" });
    await expect(service.knowledge.ingest("demo", [{ name: "new", content: "New text." }])).rejects.toMatchObject({ status: 502, message: expect.stringContaining("ollama:nomic-embed-text") });
    expect(await service.knowledge.list("demo")).toHaveLength(40);
    await expect(service.knowledge.reindex()).rejects.toMatchObject({ status: 502 });
    // An answer without one vector per text is the provider's failure too, not a crash.
    ollama.behave({ embed: "malformed" });
    await expect(service.knowledge.ingest("demo", [{ name: "new", content: "New text." }])).rejects.toMatchObject({
      status: 502,
      message: "Embedding with ollama:nomic-embed-text failed: expected 1 embeddings, got none",
    });
    expect(await service.knowledge.list("demo")).toHaveLength(40);
    ollama.behave({ embed: "ok" });
    expect((await service.knowledge.search("demo", "paragraph number 7 topic 7"))[0]).toMatchObject({ name: "doc-7" });
  });

  it("embeds a large folder's chunks here, in the same calls and order, when a server embeds them", async () => {
    const { ollama, service, dir } = await withOllamaEmbedder();
    const folder = join(dir, "docs");
    mkdirSync(folder);
    const name = (i: number) => `doc-${String(i).padStart(2, "0")}.md`;
    for (let i = 0; i < 70; i++) writeFileSync(join(folder, name(i)), `# Doc ${i}\nParagraph number ${i} about topic ${i}.\n`);

    expect(await service.knowledge.ingest("demo", [folder])).toMatchObject({ added: 70, chunks: 70, failed: [] });
    const embeds = ollama.requests.filter((r) => r.path === "/api/embed");
    expect(embeds.flatMap((r) => r.body.input)).toEqual(Array.from({ length: 70 }, (_, i) => `Doc ${i}\nParagraph number ${i} about topic ${i}.`));
    expect(embeds.map((r) => r.body.input.length)).toEqual([32, 32, 6]);
    expect((await service.knowledge.search("demo", "paragraph number 7 topic 7"))[0]).toMatchObject({ name: "doc-07.md" });

    writeFileSync(join(folder, name(3)), "# Doc 3\nChanged.\n");
    ollama.behave({ embed: "fail" });
    await expect(service.knowledge.ingest("demo", [folder])).rejects.toMatchObject({ status: 502 });
    expect((await service.knowledge.list("demo")).find((d) => d.name === name(3))).toMatchObject({ chunk_count: 1 });
    ollama.behave({ embed: "ok" });
    expect(await service.knowledge.ingest("demo", [folder])).toMatchObject({ updated: 1, skipped: 69, chunks: 1 });
  });

  /** A service on a fresh database that embeds with a fake Ollama server, without the bundled docs. */
  async function withOllamaEmbedder() {
    const ollama = track(await startFakeOllama({ dimensions: 8 }));
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const service = await open(join(dir, "kb.db"), { embedModel: "ollama:nomic-embed-text", ollamaHost: ollama.url });
    await service.bootstrap({ ingestDocs: false });
    return { ollama, service, dir };
  }
});
