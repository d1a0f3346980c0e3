import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { createChatService, internalsOf, type ChatService } from "../../src/service.js";
import { tempDir } from "../support/harness.js";

let service: ChatService | undefined;
let cleanup: (() => void) | undefined;
afterEach(async () => {
  await service?.close();
  cleanup?.();
});

const WORDS = "account api billing chatbot config database deploy document embed error export folder header import invoice key lead limit message model node option page plan query rate reply route search server session token user vector webhook".split(" ");

it("ingests 5,000 Markdown files in streamed batches with bounded memory", { timeout: 120_000 }, async () => {
  const dir = tempDir();
  cleanup = dir.cleanup;
  const docs = join(dir.dir, "docs");
  for (let i = 0; i < 5000; i++) {
    const folder = join(docs, `section-${Math.floor(i / 500)}`);
    if (i % 500 === 0) mkdirSync(folder, { recursive: true });
    const w = (n: number) => WORDS[(i * 7 + n * 13) % WORDS.length];
    const paragraph = (n: number) => Array.from({ length: 8 }, (_, s) => `Sentence ${s} of file ${i} mentions the ${w(n + s)} and the ${w(n + s + 3)}.`).join(" ");
    writeFileSync(join(folder, `page-${i}.md`), `# Page ${i}\n${paragraph(0)}\n\n## Details ${i}\n${paragraph(1)}\n\n${paragraph(2)}\n`);
  }

  service = await createChatService({ env: {}, db: join(dir.dir, "kb.db") });
  await service.bootstrap({ ingestDocs: false });
  // The chunks each storage write took: streamed, a batch's worth (128) plus at most the document that crossed it.
  const { knowledge } = internalsOf(service).storage;
  const writeBatch = knowledge.writeBatch.bind(knowledge);
  const written: number[] = [];
  knowledge.writeBatch = (batch) => {
    written.push(batch.documents.reduce((n, d) => n + d.chunks.length, 0));
    return writeBatch(batch);
  };
  const baseline = process.memoryUsage().heapUsed;
  let peak = 0;
  const report = await service.knowledge.ingest("demo", [docs], {
    onProgress: (p) => {
      if (p.done % 250 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed - baseline);
    },
  });
  expect(report).toMatchObject({ added: 5000, failed: [], skipped: 0 });
  expect(report.chunks).toBeGreaterThanOrEqual(10_000);
  expect(written.reduce((a, b) => a + b, 0)).toBe(report.chunks);
  expect(Math.max(...written)).toBeLessThan(256);
  // The heap shows little of what a run holds (the ingestion worker hands its vectors over in array buffers,
  // outside it): the writes' sizes above are what show streaming, this bound only a run gone far astray.
  expect(peak).toBeLessThan(96 * 1024 * 1024);
  console.log(`5,000 files: ${report.chunks} chunks in ${report.ms} ms (${Math.round(report.chunks / (report.ms / 1000))} chunks/s), peak heap growth ${Math.round(peak / 1048576)} MB`);

  const [hit] = await service.knowledge.search("demo", "Details 4242");
  expect(hit).toMatchObject({ name: "page-4242.md", heading: "Page 4242 > Details 4242" });
});
