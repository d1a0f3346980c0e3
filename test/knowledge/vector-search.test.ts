import { basename, dirname, join } from "node:path";
import * as sqliteVec from "sqlite-vec";
import { afterEach, describe, expect, it } from "vitest";
import { HASH_DIMENSION, hashEmbed } from "../../src/knowledge/embedders/hash.js";
import { dot, normalize } from "../../src/knowledge/embedders/index.js";
import { embeddingText } from "../../src/knowledge/document-text.js";
import { createTermSelector } from "../../src/storage/sqlite/fts-terms.js";
import { createVectorIndex } from "../../src/knowledge/vectors.js";
import { createChatService, internalsOf, type ChatService } from "../../src/service.js";
import { tempDir } from "../support/harness.js";
import { sqliteOf } from "../support/sqlite.js";
import { testDatabase, testEngine, type TestDatabase } from "../support/database.js";
import { withAdmin } from "../support/postgres.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
function temp(): string {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  return dir.dir;
}
const databases = new Map<string, TestDatabase>();
/** A service on the database named by `db`: that SQLite file, or in the postgres project one database per name. */
async function open(db: string): Promise<ChatService> {
  let database = databases.get(db);
  if (!database) {
    database = await testDatabase(dirname(db), basename(db));
    databases.set(db, database);
    const dropping = database;
    cleanups.unshift(() => dropping.drop());
  }
  const service = await createChatService({ env: {}, ...database.options });
  cleanups.push(() => service.close());
  return service;
}

/**
 * Stores pages as chunks of a chatbot's documents in one write, hash-embedded as ingestion embeds them: for tests
 * of what is read back from a large base, where ingesting page by page (look-ups and a write each) was most of the time.
 */
async function storeChunks(service: ChatService, chatbotId: number, documents: { name: string; chunks: { heading: string; content: string }[] }[]) {
  await internalsOf(service).storage.knowledge.writeBatch({
    chatbot_id: chatbotId,
    embedder: { spec: "hash", dimension: HASH_DIMENSION },
    documents: documents.map(({ name, chunks }, d) => ({
      fields: { name, type: "file", source: name, url: null, content_hash: `hash-${d}`, chunk_count: chunks.length, bytes: 0, etag: null, last_modified: null, fetched_at: null },
      chunks: chunks.map((chunk) => ({ ...chunk, vector: hashEmbed(embeddingText(chunk)) })),
    })),
    now: new Date().toISOString(),
  });
}

// A seeded pseudo-random generator, so a failure can be reproduced.
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
const VOCABULARY = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}x${(i * 7919).toString(36)}`);
function sentence(rand: () => number, length: number): string {
  // Zipf-like: low indexes are much more frequent, as in real text.
  return Array.from({ length }, () => VOCABULARY[Math.floor(VOCABULARY.length * rand() ** 3)]).join(" ");
}

/** Recall@8 of `nearest` against an exact float scan, over vectors stored in a real database. */
async function recallAt8(vectors: Float32Array[], queries: Float32Array[]): Promise<number> {
  const service = await open(join(temp(), "v.db"));
  const { chatbot } = await service.bootstrap({ ingestDocs: false });
  const { storage } = internalsOf(service);
  const index = createVectorIndex(storage.knowledge, storage.changes);
  await storage.knowledge.writeBatch({
    chatbot_id: chatbot.id,
    embedder: { spec: "test", dimension: vectors[0]!.length },
    documents: [
      {
        fields: { name: "d", type: "file", source: "s", url: null, content_hash: "h", chunk_count: vectors.length, bytes: 0, etag: null, last_modified: null, fetched_at: null },
        chunks: vectors.map((vector) => ({ heading: "", content: "x", vector })),
      },
    ],
    now: new Date().toISOString(),
  });
  // Chunk ids in insertion order, as the store hands them out.
  const ids = (await storage.knowledge.chunksOfChatbot(chatbot.id)).map((c) => c.id);
  let recall = 0;
  for (const q of queries) {
    const exact = vectors.map((v, i) => [ids[i]!, dot(q, v)] as const).sort((a, b) => b[1] - a[1]);
    const truth = new Set(exact.slice(0, 8).map(([id]) => id));
    const hits = await index.nearest(chatbot.id, q, 8);
    expect(hits).toHaveLength(8);
    // Distances are the exact float ones, nearest first.
    expect(hits[0]!.distance).toBeCloseTo(1 - exact[0]![1], 5);
    recall += hits.filter((h) => truth.has(h.chunk_id)).length / 8;
  }
  return recall / queries.length;
}

describe("nearest-vector search", () => {
  it("matches exact float search (recall@8 >= 0.95) on hash-embedded text", async () => {
    const rand = random(7);
    const chunks = Array.from({ length: 4000 }, () => hashEmbed(sentence(rand, 60 + Math.floor(rand() * 60))));
    // Short questions, some words misspelt: sparse query vectors, as in real use.
    const queries = Array.from({ length: 40 }, () => hashEmbed(sentence(rand, 3 + Math.floor(rand() * 4)).replace(/x/g, "y")));
    expect(await recallAt8(chunks, queries)).toBeGreaterThanOrEqual(0.95);
  });

  it("matches exact float search on dense vectors (as neural embedders give)", async () => {
    const rand = random(11);
    const dense = () => normalize(Float32Array.from({ length: 256 }, () => rand() * 2 - 1));
    const chunks = Array.from({ length: 3000 }, dense);
    // Queries near stored vectors, so the true neighbours stand out from the crowd.
    const queries = Array.from({ length: 30 }, (_, i) => normalize(chunks[i * 97]!.map((x) => x + (rand() - 0.5) * 0.2)));
    expect(await recallAt8(chunks, queries)).toBeGreaterThanOrEqual(0.95);
  });

  it("follows ingestion and removal done by another process on the same database", async () => {
    const db = join(temp(), "shared.db");
    const server = await open(db);
    await server.bootstrap({ ingestDocs: false });
    const cli = await open(db);
    await server.knowledge.ingest("demo", [{ name: "hours.md", content: "# Opening hours\nThe office opens at nine." }]);
    expect((await server.knowledge.search("demo", "When does the office open?"))[0]?.name).toBe("hours.md");

    // Written through another connection: the server's in-memory vectors must notice.
    await cli.knowledge.ingest("demo", [{ name: "parking.md", content: "# Parking\nVisitors park behind the warehouse." }]);
    expect((await server.knowledge.search("demo", "Where do visitors park?"))[0]?.name).toBe("parking.md");
    const parking = (await cli.knowledge.list("demo")).find((d) => d.name === "parking.md")!;
    await cli.knowledge.remove("demo", parking.id);
    const after = await server.knowledge.search("demo", "Where do visitors park?", { includeBelowThreshold: true });
    expect(after.map((c) => c.name)).not.toContain("parking.md");
    expect(after.map((c) => c.name)).toContain("hours.md");
  });
});

describe("loading vectors ahead of searches", () => {
  it("loads every chatbot's vectors, and a search during or after a load stopped part-way still sees every vector", async () => {
    const service = await open(join(temp(), "ahead.db"));
    const { organization, chatbot } = await service.bootstrap({ ingestDocs: false });
    const other = await service.chatbots.create({ organization_id: organization.id, slug: "other", name: "Other" });
    const rand = random(5);
    // More than one page of vectors (2048 a page) for the demo bot.
    const pages = Array.from({ length: 30 }, (_, d) => ({ name: `p${d}.md`, chunks: Array.from({ length: 100 }, () => ({ heading: "", content: sentence(rand, 40) })) }));
    await storeChunks(service, chatbot.id, pages);
    await storeChunks(service, other.id, [{ name: "o.md", chunks: [{ heading: "Otters", content: "Otters float on their backs." }] }]);
    await service.chatbots.create({ organization_id: organization.id, slug: "empty", name: "Empty" });

    // The service's own load: both chatbots with chunks, every vector.
    expect(await service.knowledge.preload()).toEqual({ chatbots: 2, vectors: 3001 });
    expect(await service.knowledge.preload({ signal: AbortSignal.abort() })).toEqual({ chatbots: 0, vectors: 0 });

    // A copy of its own, whose load is stopped before it is done; a search asked meanwhile reads the rest itself.
    const { storage } = internalsOf(service);
    const index = createVectorIndex(storage.knowledge, storage.changes);
    const stop = new AbortController();
    const loading = index.load(chatbot.id, stop.signal);
    setImmediate(() => stop.abort());
    const query = hashEmbed(pages[29]!.chunks[99]!.content);
    const [loaded, hits] = await Promise.all([loading, index.nearest(chatbot.id, query, 8)]);
    expect(loaded).toBeLessThan(3000);
    const ids = (await storage.knowledge.chunksOfChatbot(chatbot.id)).map((c) => c.id);
    // The last chunk stored is the one asked about: found only if the search read past where the load stopped.
    expect(hits[0]).toMatchObject({ chunk_id: ids.at(-1) });
    expect(hits[0]!.distance).toBeCloseTo(0, 5);
    expect(await index.load(chatbot.id, new AbortController().signal)).toBe(3000);
  });
});

describe("full-text candidates", () => {
  it("finds a chatbot's match even when another chatbot's chunks fill the global top", async () => {
    const service = await open(join(temp(), "kb.db"));
    const { organization } = await service.bootstrap({ ingestDocs: false });
    const busy = await service.chatbots.create({ organization_id: organization.id, slug: "busy", name: "Busy" });
    // 300 chunks that match "zebra" better than the demo bot's single one: the global top 128 holds none of the demo bot's.
    const zebras = Array.from({ length: 300 }, (_, i) => ({ heading: `Zebra ${i}`, content: `Zebra zebra zebra stripes, zebra herd number ${i}.` }));
    await storeChunks(service, busy.id, [{ name: "zebras.md", chunks: zebras }]);
    await service.knowledge.ingest("demo", [{ name: "zoo.md", content: "# Zoo map\nThe zebra enclosure is next to the café, by the long lake path." }]);
    const { knowledge } = internalsOf(service).storage;
    const [zoo] = await knowledge.fullText((await service.chatbots.get("demo")).id, ["zebra"], 32);
    expect(zoo).toBeDefined();
    expect(await knowledge.fullText((await service.chatbots.get("busy")).id, ["zebra"], 32)).toHaveLength(32);
    const hits = await service.knowledge.search("demo", "where is the zebra");
    expect(hits.map((h) => h.chunk_id)).toEqual([zoo]);
  });

  it("answers every limit with the chatbot's best that many, however many limits were asked for", async () => {
    const service = await open(join(temp(), "kb.db"));
    const { organization } = await service.bootstrap({ ingestDocs: false });
    await service.chatbots.create({ organization_id: organization.id, slug: "other", name: "Other" });
    const docs = (prefix: string) => Array.from({ length: 40 }, (_, i) => ({ name: `${prefix}${i}.md`, content: `# Otter ${i}\n${"Otters float. ".repeat(1 + (i % 7))}River ${i}.` }));
    await service.knowledge.ingest("other", docs("o"));
    await service.knowledge.ingest("demo", docs("d"));
    const { knowledge } = internalsOf(service).storage;
    const demo = (await service.chatbots.get("demo")).id;
    const all = await knowledge.fullText(demo, ["otters"], 40);
    expect(all).toHaveLength(40);
    // More distinct limits than statements are kept (one per limit), each twice, in both the global and the per-chatbot reads.
    for (const round of [1, 2]) {
      for (let limit = 1; limit <= 20; limit++) expect(await knowledge.fullText(demo, ["otters"], limit), `limit ${limit}, round ${round}`).toEqual(all.slice(0, limit));
    }
  });

  it.skipIf(testEngine !== "sqlite")("answers each chatbot's exact ranking while questions alternate between a crowded chatbot and a leading one", async () => {
    const service = await open(join(temp(), "kb.db"));
    const { organization } = await service.bootstrap({ ingestDocs: false });
    await service.chatbots.create({ organization_id: organization.id, slug: "big", name: "Big" });
    // "Heron" pages are mostly the big chatbot's, "kestrel" pages mostly the demo's: each chatbot leads for one word and is crowded for the other.
    const pages = (prefix: string, lead: string, other: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}.md`, content: `# ${i % 3 ? lead : other} ${i}\n${`${i % 3 ? lead : other} notes. `.repeat(1 + (i % 5))}Page ${i}.` }));
    await service.knowledge.ingest("big", pages("b", "heron", "kestrel", 90));
    await service.knowledge.ingest("demo", pages("d", "kestrel", "heron", 90));
    const { knowledge } = internalsOf(service).storage;
    const bots = [(await service.chatbots.get("demo")).id, (await service.chatbots.get("big")).id];
    const exact = sqliteOf(service).prepare<[string, number, number], number>(
      `SELECT c.id FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid
        WHERE chunks_fts MATCH ? AND c.chatbot_id = ? ORDER BY bm25(chunks_fts, 1.0, 2.0) LIMIT ?`,
    ).pluck();
    for (const [word, bot, limit] of [
      ["heron", 0, 8], ["heron", 0, 8], ["kestrel", 0, 8], ["kestrel", 0, 8], ["heron", 0, 8], ["heron", 1, 8],
      ["kestrel", 1, 3], ["heron", 1, 3], ["kestrel", 0, 40], ["heron", 0, 40], ["kestrel", 0, 2],
    ] as const) {
      expect(await knowledge.fullText(bots[bot]!, [word], limit), `${word}, chatbot ${bot}, limit ${limit}`).toEqual(exact.all(`"${word}"`, bots[bot]!, limit));
    }
  });

  // On PostgreSQL, once the table's statistics hold them (autovacuum analyses it after an ingestion), the frequencies of common
  // words are read from there instead of counted: the same words must be left out.
  const analysedOrNot = testEngine === "postgres" ? [{ analysed: false }, { analysed: true }] : [{ analysed: false }];
  it.each(analysedOrNot)("leaves out words found in more than one chunk in twenty of a large base, keeping the rarest, also after only their existence was checked (analysed: $analysed)", { timeout: 60_000 }, async ({ analysed }) => {
    const db = join(temp(), "kb.db");
    const service = await open(db);
    const { chatbot } = await service.bootstrap({ ingestDocs: false });
    // 1,500 one-line pages, past the 1,000 chunks under which no word is left out, 100 to a document.
    // Page 707, the only one with "unicorn", is in p7.md.
    const page = (i: number) => ({ heading: "", content: `Common words fill page ${i}.${i === 707 ? " Unicorn sighting." : ""}` });
    await storeChunks(service, chatbot.id, Array.from({ length: 15 }, (_, d) => ({ name: `p${d}.md`, chunks: Array.from({ length: 100 }, (_, i) => page(d * 100 + i)) })));
    if (analysed) await withAdmin(databases.get(db)!.options.database!, (client) => client.query("ANALYZE chunks"));
    const { knowledge } = internalsOf(service).storage;
    // An expansion asks which words exist (on PostgreSQL that stops at the first chunk); the question's own words then need their counts.
    expect(await knowledge.knownWords(["common", "unicorn", "page", "griffin"])).toEqual(["common", "unicorn", "page"]);
    const hits = await knowledge.fullText((await service.chatbots.get("demo")).id, ["common", "unicorn", "page"], 50);
    expect(hits).toHaveLength(1);
    expect((await knowledge.chunks(hits))[0]?.name).toBe("p7.md");
    if (testEngine === "sqlite") {
      const { select } = createTermSelector(sqliteOf(service));
      expect(select(["common", "unicorn", "page"])).toEqual(["unicorn"]);
      // Nothing rarer: the rarest frequent word stays, so the query still matches.
      expect(select(["common"])).toEqual(["common"]);
    }
    expect((await service.knowledge.search("demo", "common unicorn page"))[0]?.name).toBe("p7.md");
  });
});

describe.skipIf(testEngine !== "sqlite")("databases from before chunk_embeddings (SQLite)", () => {
  it("moves the vec0 vectors over on open and answers as before", async () => {
    const db = join(temp(), "old.db");
    const before = await open(db);
    await before.bootstrap();
    const question = "How do I create an API key?";
    const expected = await before.knowledge.search("demo", question);
    expect(expected.length).toBeGreaterThan(0);

    // Turn it back into the old layout: the vectors only in a vec0 table. (Migrations stay applied:
    // later ones cannot be rolled back and re-run, and the copy happens after migrating anyway.)
    const sqlite = sqliteOf(before);
    sqliteVec.load(sqlite);
    sqlite.exec(`
      CREATE VIRTUAL TABLE chunk_vectors USING vec0(chunk_id integer primary key, chatbot_id integer partition key, embedding float[384] distance_metric=cosine);
      CREATE TRIGGER chunk_vectors_ad AFTER DELETE ON chunks BEGIN DELETE FROM chunk_vectors WHERE chunk_id = old.id; END;
    `);
    const insert = sqlite.prepare("INSERT INTO chunk_vectors (chunk_id, chatbot_id, embedding) VALUES (?, ?, ?)");
    for (const row of sqlite.prepare("SELECT chunk_id, chatbot_id, embedding FROM chunk_embeddings").raw().all() as [number, number, Buffer][]) {
      insert.run(BigInt(row[0]), BigInt(row[1]), row[2]);
    }
    sqlite.exec("DELETE FROM chunk_embeddings");
    const chunks = (sqlite.prepare("SELECT count(*) AS n FROM chunks").get() as { n: number }).n;
    await before.close();

    const after = await open(db);
    const migrated = sqliteOf(after);
    expect(migrated.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'chunk_vectors%' OR name LIKE 'chunks_fts_vocab%'").all()).toEqual([]);
    expect(migrated.prepare("SELECT count(*) AS n FROM chunk_embeddings").get()).toEqual({ n: chunks });
    expect(await after.knowledge.search("demo", question)).toEqual(expected);
    // Deleting still takes the vectors along.
    await after.knowledge.remove("demo", expected[0]!.document_id);
    expect(migrated.prepare("SELECT count(*) AS n FROM chunk_embeddings WHERE chunk_id = ?").get(expected[0]!.chunk_id)).toEqual({ n: 0 });
  });
});
