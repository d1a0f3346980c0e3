import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { IngestReport } from "../../src/index.js";
import { createChatService, type ChatService } from "../../src/service.js";
import { TEST_BUILD_DIR } from "../support/build-cli.js";
import { testDatabase, testEngine } from "../support/database.js";
import { tempDir } from "../support/harness.js";
import { sqlOf } from "../support/sql.js";
import { makePdf } from "./helpers.js";

// Large ingestions read, chunk and embed their files in a worker thread ahead of the writes; small ones in the
// calling thread. These tests hold the first to the second: same documents, chunks, vectors and reports.
let h: { dir: string; service: ChatService; close(): Promise<void> };

function write(path: string, content: string | Buffer): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
  return path;
}

/** A Markdown file of its own words, with several sections, some longer than a chunk. */
function guide(i: number, sections = 3): string {
  const parts: string[] = [];
  for (let s = 0; s < sections; s++) {
    const sentences = Array.from({ length: 4 + ((i * 7 + s * 3) % 40) }, (_, n) => `Topic ${i} part ${s} explains setting number ${n} of module m${i}x${s}.`);
    parts.push(`${s === 0 ? "#" : "##"} Section ${s} of guide ${i}\n\n${sentences.join(" ")}\n`);
  }
  return parts.join("\n");
}

/** A folder of many files of every kind: good ones, broken ones, empty ones, a duplicate and an unsupported one. */
function folder(): string {
  const docs = join(h.dir, "docs");
  // 60 guides and 10 other files: past the 64 files from which ingestion prepares them in its worker.
  for (let i = 0; i < 60; i++) write(join(docs, i < 30 ? "a" : "b", `guide-${String(i).padStart(3, "0")}.md`), guide(i));
  write(join(docs, "page.html"), "<html><head><title>Pricing page</title></head><body><h1>Pricing</h1><p>The pro plan costs 20 EUR.</p></body></html>");
  write(join(docs, "faq.json"), JSON.stringify([{ question: "Do you ship abroad?", answer: "Yes, to 40 countries." }]));
  write(join(docs, "manual.pdf"), makePdf(["Warranty lasts two years.", "Keep the receipt."]));
  write(join(docs, "plain.txt"), "Plain text about the office opening hours: nine to five.\n");
  write(join(docs, "broken.json"), "{ not json");
  write(join(docs, "binary.txt"), Buffer.from([0x41, 0x00, 0x42]));
  write(join(docs, "fake.pdf"), "not a pdf at all");
  write(join(docs, "empty.md"), "");
  write(join(docs, "headings-only.md"), "# Nothing\n\n## Below\n");
  write(join(docs, "logo.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  copyFileSync(join(docs, "a", "guide-003.md"), join(docs, "b", "copy-of-003.md"));
  return docs;
}

/** What a chatbot's knowledge base holds: documents, their chunks in order and each chunk's vector, by source. */
async function stored(slug: string) {
  const rows = await sqlOf(h.service).all<{ source: string; name: string; content_hash: string; chunk_count: number; bytes: number; ordinal: number; heading: string; content: string; embedding: Uint8Array }>(
    `SELECT d.source, d.name, d.content_hash, d.chunk_count, d.bytes, c.ordinal, c.heading, c.content, e.embedding
       FROM documents d JOIN chatbots b ON b.id = d.chatbot_id JOIN chunks c ON c.document_id = d.id JOIN chunk_embeddings e ON e.chunk_id = c.id
      WHERE b.slug = ? ORDER BY d.source, c.ordinal`,
    slug,
  );
  return rows.map((r) => ({ ...r, embedding: Buffer.from(r.embedding).toString("hex") }));
}

/** Ingests each input on its own (each small enough to be read in this thread) and adds up the reports. */
async function oneByOne(slug: string, inputs: string[]) {
  const total = { added: 0, updated: 0, skipped: 0, chunks: 0, failed: [] as IngestReport["failed"], skipped_inputs: [] as IngestReport["skipped_inputs"] };
  for (const input of inputs) {
    const report = await h.service.knowledge.ingest(slug, [input]);
    total.added += report.added;
    total.updated += report.updated;
    total.skipped += report.skipped;
    total.chunks += report.chunks;
    total.failed.push(...report.failed);
    total.skipped_inputs.push(...report.skipped_inputs);
  }
  return total;
}

const summary = ({ added, updated, skipped, chunks, failed, skipped_inputs }: IngestReport) => ({ added, updated, skipped, chunks, failed, skipped_inputs });

// Each test ingests about seventy files, some one call at a time; on a loaded 2-core machine that can take a while.
describe("ingesting a large folder", { timeout: 60_000 }, () => {
  // A service without the bundled docs or an HTTP server: the tests ingest into two chatbots of their own and read
  // them back, so a harness's first-run ingestion and HTML renderer would be work they never look at.
  beforeEach(async () => {
    const { dir, cleanup } = tempDir();
    const database = await testDatabase(dir);
    const service = await createChatService({ env: {}, logLevel: "warn", renderWorker: false, ...database.options });
    h = {
      dir,
      service,
      async close() {
        await service.close();
        await database.drop();
        cleanup();
      },
    };
    const { organization } = await service.bootstrap({ ingestDocs: false });
    for (const slug of ["ahead", "one-by-one"]) await service.chatbots.create({ organization_id: organization.id, slug, name: slug });
  });
  afterEach(async () => {
    await h.close();
  });

  it("stores the same documents, chunks and vectors, and reports the same, as ingesting its files one by one", async () => {
    const docs = folder();
    const progress: { done: number; total: number; current: string }[] = [];
    const report = await h.service.knowledge.ingest("ahead", [docs], { onProgress: (p) => progress.push(p) });

    const files = progress.slice(0, -1).map((p) => p.current);
    expect(progress.map((p) => p.done)).toEqual(files.map((_, i) => i).concat(files.length));
    expect(progress.every((p) => p.total === files.length)).toBe(true);
    const alone = await oneByOne("one-by-one", files);
    const unsupported = { input: join(docs, "logo.png"), reason: expect.stringContaining('unsupported file type ".png"') };
    expect(summary(report)).toEqual({ ...alone, skipped_inputs: [unsupported, ...alone.skipped_inputs] });
    expect(report).toMatchObject({ added: 64, updated: 0, skipped: 1 });
    expect(report.failed.map((f) => [f.input.replace(docs, ""), f.error])).toEqual([
      ["/binary.txt", expect.stringContaining("not a text file")],
      ["/broken.json", expect.stringContaining("invalid JSON")],
      ["/fake.pdf", expect.stringContaining("not a readable PDF")],
      ["/headings-only.md", "no text found"],
    ]);
    expect(report.skipped_inputs.map((s) => [s.input.replace(docs, ""), s.reason])).toEqual([
      ["/logo.png", expect.any(String)],
      ["/empty.md", "empty: no text to index"],
    ]);

    const ahead = await stored("ahead");
    expect(ahead.length).toBe(report.chunks);
    expect(ahead).toEqual(await stored("one-by-one"));
    const [hit] = await h.service.knowledge.search("ahead", "How long does the warranty last?");
    expect(hit).toMatchObject({ name: "manual.pdf" });
  });

  it("skips what is stored on the next run, replaces what changed, and writes content it expected to skip when that went meanwhile", async () => {
    const docs = folder();
    await h.service.knowledge.ingest("ahead", [docs]);
    const before = await stored("ahead");
    const first = join(docs, "a", "guide-000.md");
    const original = before.filter((r) => r.source === first);
    // The first file grows past a write's worth of chunks, so its new version is written before the next file is
    // looked at; that file now holds the first one's old text, which was stored when the run began.
    write(first, guide(0, 120));
    const moved = write(join(docs, "a", "guide-000b.md"), guide(0));

    const report = await h.service.knowledge.ingest("ahead", [docs]);

    const grown = (await stored("ahead")).filter((r) => r.source === first);
    expect(grown.length).toBeGreaterThan(128);
    expect(report).toMatchObject({ added: 1, updated: 1, skipped: 64, chunks: grown.length + original.length });
    expect(report.failed.map((f) => f.input.replace(docs, ""))).toEqual(["/binary.txt", "/broken.json", "/fake.pdf", "/headings-only.md"]);
    const after = await stored("ahead");
    expect(after.filter((r) => r.source === moved).map(({ source: _s, name: _n, ...rest }) => rest)).toEqual(original.map(({ source: _s, name: _n, ...rest }) => rest));
    const untouched = (rows: typeof before) => rows.filter((r) => r.source !== first && r.source !== moved);
    expect(untouched(after)).toEqual(untouched(before));
  });
});

// The built package on a SQLite file: the same run in the postgres project would test nothing more.
describe.skipIf(testEngine === "postgres")("the built package", { timeout: 60_000 }, () => {
  it("starts ingest-worker.js from dist for a large folder", (context) => {
    const { dir, cleanup } = tempDir();
    context.onTestFinished(cleanup);
    const docs = join(dir, "many");
    for (let i = 0; i < 70; i++) write(join(docs, `page-${i}.md`), guide(i, 1));
    const script = `
      const { createChatService } = await import(${JSON.stringify(join(TEST_BUILD_DIR, "index.js"))});
      const service = await createChatService({ db: ${JSON.stringify(join(dir, "built.db"))}, env: {} });
      const organization = await service.orgs.create({ name: "Acme" });
      await service.chatbots.create({ organization_id: organization.id, slug: "demo", name: "Demo" });
      const report = await service.knowledge.ingest("demo", [${JSON.stringify(docs)}]);
      process.stdout.write(JSON.stringify(report));
      await service.close();`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 60_000 });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ added: 70, failed: [], skipped_inputs: [] });
  });
});
