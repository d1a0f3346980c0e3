import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ChatsvcError } from "../../src/core/errors.js";
import { createSearchThread } from "../../src/knowledge/search-thread.js";
import { startServer } from "../../src/http/server.js";
import { createChatService, internalsOf, type ChatService } from "../../src/service.js";
import { testEngine } from "../support/database.js";
import { request, tempDir } from "../support/harness.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
function temp(): string {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  return dir.dir;
}
async function open(db: string, options: Parameters<typeof createChatService>[0] = {}): Promise<ChatService> {
  const service = await createChatService({ env: {}, logLevel: "warn", renderWorker: false, db, ...options });
  cleanups.push(() => service.close());
  return service;
}
const threadOf = (service: ChatService) => internalsOf(service).searchThread!;

const HOURS = { name: "hours.md", content: "# Opening hours\nThe office opens at nine and closes at five on weekdays." };
const PARKING = { name: "parking.md", content: "# Parking\nVisitors park behind the warehouse, next to the loading bay." };
const REFUNDS = { name: "refunds.md", content: "# Refunds\nA refund reaches your card within five working days of the return." };
const QUESTIONS = ["When does the office open?", "Where do visitors park?", "How long does a refund take?", "refund card days", "quantum entanglement"];

// The search thread is a SQLite feature (PostgreSQL searches in its own server processes).
describe.skipIf(testEngine === "postgres")("search thread (SQLite file)", () => {
  it("answers in a worker thread what the main thread answers, and follows documents ingested and removed through the service", async () => {
    const db = join(temp(), "chatsvc.db");
    const threaded = await open(db, { searchThread: true });
    await threaded.bootstrap({ ingestDocs: false });
    await threaded.knowledge.ingest("demo", [HOURS, PARKING]);
    const plain = await open(db);
    expect(internalsOf(plain).searchThread).toBeUndefined();

    expect((await threaded.knowledge.search("demo", "Where do visitors park?"))[0]?.name).toBe("parking.md");
    for (const question of QUESTIONS) {
      const options = { includeBelowThreshold: true, k: 3 };
      expect(await threaded.knowledge.search("demo", question, options)).toEqual(await plain.knowledge.search("demo", question, options));
    }
    // Searches outside a chat turn do not ask for the extractive answer.
    expect(threadOf(threaded).stats()).toMatchObject({ threadsStarted: 1, answered: QUESTIONS.length + 1, extracts: 0, inThread: false });

    // Written through another connection than the thread's (the main thread's or the knowledge writer's): the thread's index and full text must see it at once.
    await threaded.knowledge.ingest("demo", [REFUNDS]);
    expect((await threaded.knowledge.search("demo", "How long does a refund take?"))[0]?.name).toBe("refunds.md");
    const parking = (await threaded.knowledge.list("demo")).find((d) => d.name === "parking.md")!;
    await threaded.knowledge.remove("demo", parking.id);
    const after = await threaded.knowledge.search("demo", "Where do visitors park?", { includeBelowThreshold: true });
    expect(after.map((c) => c.name)).not.toContain("parking.md");
    expect(after.map((c) => c.name)).toContain("hours.md");
  });

  it("reads what another connection wrote to the knowledge base at the very next search", async () => {
    const db = join(temp(), "chatsvc.db");
    const threaded = await open(db, { searchThread: true });
    await threaded.bootstrap({ ingestDocs: false });
    await threaded.knowledge.ingest("demo", [HOURS, PARKING]);
    const top = async (question: string) => (await threaded.knowledge.search("demo", question))[0]?.name;
    expect(await top("Where do visitors park?")).toBe("parking.md");
    // Conversations change between searches: the thread may go on reading its snapshot, but not past these writes.
    const org = (await threaded.chatbots.get("demo")).organization_id;
    await threaded.conversations.start(org, "demo", {});
    const other = new Database(db);
    cleanups.push(() => other.close());
    other.prepare("UPDATE documents SET name = 'visitors.md' WHERE name = 'parking.md'").run();
    expect(await top("Where do visitors park?")).toBe("visitors.md");
    const elsewhere = await open(db);
    await elsewhere.knowledge.ingest("demo", [REFUNDS]);
    expect(await top("How long does a refund take?")).toBe("refunds.md");
    other.prepare("UPDATE settings SET value = json_set(value, '$.spec', 'ollama:nomic-embed-text') WHERE key = 'knowledge.embedder'").run();
    await expect(threaded.knowledge.search("demo", "How long does a refund take?")).rejects.toMatchObject({ status: 409 });
  });

  it("lets an erasure empty the log while the thread's searches read from a snapshot", async () => {
    const db = join(temp(), "chatsvc.db");
    const service = await open(db, { searchThread: true });
    await service.bootstrap({ ingestDocs: false });
    await service.knowledge.ingest("demo", [HOURS, PARKING]);
    const org = (await service.chatbots.get("demo")).organization_id;
    const { conversation_id } = await service.conversations.start(org, "demo", { visitor_id: "v-erased" });
    await service.chat.send(org, "demo", conversation_id, { message: "Where do visitors park, asks Quentin Erasable?" });
    // A search just before the erasure: the thread holds its snapshot for a while after it.
    await service.knowledge.search("demo", "When does the office open?");
    await service.privacy.eraseVisitor(org, { visitor_id: "v-erased" }, { actor: "test" });
    expect(statSync(`${db}-wal`).size).toBe(0);
    expect(readFileSync(db).toString("latin1")).not.toContain("Quentin Erasable");
  });

  it("ranks with the full-text candidates found on the calling thread's connection as the main thread ranks with its own", async () => {
    // The bundled docs: enough chunks that full text and vectors each bring candidates the other does not.
    const db = join(temp(), "chatsvc.db");
    const threaded = await open(db, { searchThread: true });
    await threaded.bootstrap();
    const plain = await open(db);
    const questions = ["How do I create an API key?", "webhook signature verification", "rate limit per key", "export conversations csv", "erase a visitor", "kb reindex", "sync every", "busy timeout"];
    for (const question of questions) {
      const options = { includeBelowThreshold: true, k: 8 };
      expect(await threaded.knowledge.search("demo", question, options)).toEqual(await plain.knowledge.search("demo", question, options));
    }
    expect(threadOf(threaded).stats()).toMatchObject({ answered: questions.length, inThread: false });
  });

  it("answers a chat turn over HTTP from the thread's retrieval, with its sources", async () => {
    // Served without the bundled docs (a harness's first run ingests them): the answer must come from these two.
    const service = await open(join(temp(), "chatsvc.db"), { searchThread: true });
    const { key } = await service.bootstrap({ ingestDocs: false });
    await service.knowledge.ingest("demo", [HOURS, PARKING]);
    const server = await startServer(service, { port: 0, onUnexpectedError: (e) => console.error(e) });
    cleanups.push(() => server.close());
    const call = (path: string, json: unknown) => request(`${server.url}/api/v1${path}`, { method: "POST", json, key: key.key });
    const started = await call("/chatbots/demo/conversations", {});
    const sent = await call(`/chatbots/demo/conversations/${started.body.data.conversation_id}/messages`, { message: "Where do visitors park?" });
    expect(sent.status).toBe(200);
    expect(sent.body.data.cannot_answer).toBe(false);
    expect(sent.body.data.reply).toMatch(/warehouse/);
    expect(sent.body.data.sources.map((s: { name: string }) => s.name)).toContain("parking.md");
    expect(threadOf(service).stats()).toMatchObject({ answered: 1, extracts: 1 });
  });

  it("works out the extractive answer with the search, the same answer the main thread gives", async () => {
    const db = join(temp(), "chatsvc.db");
    const threaded = await open(db, { searchThread: true });
    await threaded.bootstrap({ ingestDocs: false });
    await threaded.knowledge.ingest("demo", [HOURS, PARKING, REFUNDS]);
    const plain = await open(db);
    const org = (await threaded.chatbots.get("demo")).organization_id;
    const reply = async (service: ChatService, message: string) => {
      const { conversation_id } = await service.conversations.start(org, "demo", {});
      const { data } = await service.chat.send(org, "demo", conversation_id, { message });
      if (!("sources" in data)) throw new Error("a person answers this conversation");
      return { reply: data.reply, cannot_answer: data.cannot_answer, sources: data.sources };
    };
    for (const question of QUESTIONS) expect(await reply(threaded, question)).toEqual(await reply(plain, question));
    // Every question that found chunks had its answer worked out in the thread ("quantum entanglement" found none).
    expect(threadOf(threaded).stats()).toMatchObject({ answered: QUESTIONS.length, extracts: QUESTIONS.length - 1 });
  });

  it("refuses with the same error as the main thread when the stored vectors come from another embedder", async () => {
    const db = join(temp(), "chatsvc.db");
    const hashed = await open(db);
    await hashed.bootstrap({ ingestDocs: false });
    await hashed.knowledge.ingest("demo", [HOURS]);
    const other = await open(db, { searchThread: true, embedModel: "ollama:nomic-embed-text" });
    const error = await other.knowledge.search("demo", "When does the office open?").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatsvcError);
    expect(error).toMatchObject({ status: 409, details: { stored_embedder: "hash", configured_embedder: "ollama:nomic-embed-text" } });
    expect((error as Error).message).toMatch(/chatsvc kb reindex/);
    expect(threadOf(other).stats()).toMatchObject({ answered: 1, inThread: false });
  });

  it("lets a search under way finish when the service closes", async () => {
    const db = join(temp(), "chatsvc.db");
    const service = await createChatService({ env: {}, logLevel: "warn", renderWorker: false, db, searchThread: true });
    await service.bootstrap({ ingestDocs: false });
    await service.knowledge.ingest("demo", [HOURS, PARKING]);
    const searching = service.knowledge.search("demo", "Where do visitors park?");
    await service.close();
    expect((await searching)[0]?.name).toBe("parking.md");
  });

  it("loads every chatbot's vectors in the thread ahead of its searches, which then answer as before", async () => {
    const db = join(temp(), "chatsvc.db");
    const threaded = await open(db, { searchThread: true });
    await threaded.bootstrap({ ingestDocs: false });
    await threaded.knowledge.ingest("demo", [HOURS, PARKING]);
    const bot = await threaded.chatbots.get("demo");
    const vectors = (await internalsOf(threaded).storage.knowledge.chunksOfChatbot(bot.id)).length;
    expect(await threaded.knowledge.preload()).toEqual({ chatbots: 1, vectors });
    expect(threadOf(threaded).stats()).toMatchObject({ threadsStarted: 1, answered: 0 });
    expect((await threaded.knowledge.search("demo", "Where do visitors park?"))[0]?.name).toBe("parking.md");
    // The copy loaded ahead follows the knowledge base like any other.
    await threaded.knowledge.ingest("demo", [REFUNDS]);
    expect((await threaded.knowledge.search("demo", "How long does a refund take?"))[0]?.name).toBe("refunds.md");
    expect(threadOf(threaded).stats()).toMatchObject({ threadsStarted: 1, answered: 2 });
  });

  it("closes while loading vectors ahead without hanging or failing the load", async () => {
    const db = join(temp(), "chatsvc.db");
    const threaded = await createChatService({ env: {}, logLevel: "warn", renderWorker: false, db, searchThread: true });
    // Closed by the test itself; this only covers a failure before that (closing twice is a no-op).
    cleanups.push(() => threaded.close());
    const { chatbot } = await threaded.bootstrap({ ingestDocs: false });
    const chunks = Array.from({ length: 6000 }, (_, i) => ({ heading: "", content: `Chunk ${i} of a large base`, vector: new Float32Array(384).fill(i % 7) }));
    await internalsOf(threaded).storage.knowledge.writeBatch({
      chatbot_id: chatbot.id,
      embedder: { spec: "hash", dimension: 384 },
      documents: [{ fields: { name: "big.md", type: "file", source: "big.md", url: null, content_hash: "h", chunk_count: chunks.length, bytes: 0, etag: null, last_modified: null, fetched_at: null }, chunks }],
      now: new Date().toISOString(),
    });
    const loading = threaded.knowledge.preload();
    await threaded.close();
    const { chatbots, vectors } = await loading;
    expect(chatbots).toBeLessThanOrEqual(1);
    expect(vectors).toBeLessThanOrEqual(6000);
  });

  it("fails a search whose full-text step fails in the calling thread, and answers the next one", async () => {
    const db = join(temp(), "chatsvc.db");
    const service = await open(db);
    await service.bootstrap({ ingestDocs: false });
    await service.knowledge.ingest("demo", [HOURS, PARKING]);
    const bot = await service.chatbots.get("demo");
    let failing = true;
    const thread = createSearchThread(
      { file: db, busyTimeoutMs: 1000, embedModel: "hash", embedder: { ollamaHost: "", openaiBaseUrl: "", openaiApiKey: undefined, modelTimeoutMs: 1000 } },
      {
        inThread: () => Promise.reject(new Error("searched in the calling thread")),
        loadInThread: () => Promise.reject(new Error("loaded in the calling thread")),
        textHits: async () => {
          if (failing) throw new Error("disk I/O error");
          return [];
        },
        onFailure: (error) => expect.fail(error.message),
      },
    );
    cleanups.push(() => thread.close());
    const options = { k: 3, threshold: 0.2, includeBelowThreshold: false };
    await expect(thread.search(bot.id, "Where do visitors park?", options)).rejects.toThrow("disk I/O error");
    failing = false;
    expect((await thread.search(bot.id, "Where do visitors park?", options))[0]?.name).toBe("parking.md");
    expect(thread.stats()).toMatchObject({ threadsStarted: 1, answered: 1, inThread: false });
  });

  it("searches in the calling thread, and says why, when the thread cannot open the database", async () => {
    const failures: string[] = [];
    const thread = createSearchThread(
      { file: join(temp(), "missing.db"), busyTimeoutMs: 1000, embedModel: "hash", embedder: { ollamaHost: "", openaiBaseUrl: "", openaiApiKey: undefined, modelTimeoutMs: 1000 } },
      {
        inThread: async (chatbotId, query) => [{ chunk_id: chatbotId, document_id: 1, content: query, heading: "", name: "here.md", title: "here", type: "text", url: null, score: 1 }],
        loadInThread: async (chatbotId) => chatbotId * 10,
        textHits: async () => [],
        onFailure: (error) => failures.push(error.message),
      },
    );
    cleanups.push(() => thread.close());
    const options = { k: 3, threshold: 0.2, includeBelowThreshold: false };
    // Sent before the thread failed to start: answered here all the same.
    const [first, second, loaded] = await Promise.all([thread.search(1, "one", options), thread.search(2, "two", options), thread.load(7)]);
    expect([first[0]?.content, second[0]?.content, loaded]).toEqual(["one", "two", 70]);
    expect(await thread.load(8)).toBe(80);
    expect((await thread.search(3, "three", options))[0]?.chunk_id).toBe(3);
    expect(thread.stats()).toMatchObject({ threadsStarted: 1, answered: 0, inThread: true });
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/searches run on the main thread: the search thread could not start/);
  });
});
