import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expandQuery } from "../../src/knowledge/expansion.js";
import { cosine, sentenceVector, similarWords } from "../../src/knowledge/text/word-vectors.js";
import { createChatService, type ChatService } from "../../src/service.js";
import { tempDir } from "../support/harness.js";

describe("the shipped word-vector table", () => {
  it("gives words used in the same contexts, most similar first", () => {
    expect(similarWords("printer").slice(0, 3)).toEqual(expect.arrayContaining(["scanner", "printing"]));
    expect(similarWords("refund")).toContain("reimbursement");
    expect(similarWords("qwxzv")).toEqual([]);
  });

  it("places a sentence nearer a paraphrase than an unrelated one", () => {
    const vector = (text: string) => sentenceVector(text.split(" "))!;
    const asked = vector("read books on my tablet");
    expect(cosine(asked, vector("ebooks for phones and laptops"))).toBeGreaterThan(cosine(asked, vector("parking fines for late cars")));
    expect(sentenceVector(["qwxzv"])).toBeNull();
  });

  it("adds similar words to a question's expansion only when asked, and only those kept", () => {
    expect(expandQuery("Where is the printer?").words).not.toContain("scanner");
    expect(expandQuery("Where is the printer?", (w) => w, true).words).toContain("scanner");
    expect(expandQuery("Where is the printer?", (w) => w.filter((x) => x !== "scanner"), true).words).not.toContain("scanner");
  });
});

describe("retrieval of a paraphrase through word vectors", () => {
  let service: ChatService;
  let cleanup: () => void;
  beforeAll(async () => {
    const dir = tempDir();
    cleanup = dir.cleanup;
    service = await createChatService({ env: {}, db: join(dir.dir, "kb.db"), logLevel: "warn", renderWorker: false });
    await service.bootstrap({ ingestDocs: false });
    // The eval's library knowledge base: the question below is in its dev set and shares no word with its answer.
    const docs = join(import.meta.dirname, "..", "..", "bench", "eval", "kbs", "library", "docs");
    await service.knowledge.ingest("demo", readdirSync(docs).map((name) => ({ name, content: readFileSync(join(docs, name), "utf8") })));
  });
  afterAll(async () => {
    await service.close();
    cleanup();
  });

  it("finds the digital library when asked about reading on a tablet", async () => {
    const hits = await service.knowledge.search("demo", "Can I read on my tablet instead of paper?");
    expect(hits.slice(0, 3).map((h) => h.name)).toContain("digital-library.md");
  });

  it("brings in the returns section, which shares no word with the question, once the question is on topic", async () => {
    const hits = await service.knowledge.search("demo", "Where do I drop off stuff when you are closed?");
    expect(hits.slice(0, 3).map((h) => h.name)).toContain("borrowing.md");
  });

  it("still refuses an off-topic question", async () => {
    expect(await service.knowledge.search("demo", "What is the capital of Australia?")).toEqual([]);
  });
});
