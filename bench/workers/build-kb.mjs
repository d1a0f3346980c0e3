// Builds a benchmark knowledge base with the product's own ingestion.
// Usage: build-kb.mjs <db file or postgres:// URL> <chunks> <seed> <meta json out>
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BENCH_DIST } from "../lib/build.mjs";
import { createCorpus } from "../lib/dataset.mjs";

const [db, chunksArg, seedArg, metaOut] = process.argv.slice(2);
const target = Number(chunksArg);
const { createChatService } = await import(join(BENCH_DIST, "index.js"));
const service = await createChatService({ ...(db.startsWith("postgres") ? { database: db } : { db }), env: {}, creditsMonthly: 1_000_000_000 });
const { organization, key } = await service.bootstrap({ organizationName: "Bench", email: "bench@example.com" });
await service.chatbots.create({ organization_id: organization.id, slug: "kb", name: "Bench knowledge base" });

const corpus = createCorpus(Number(seedArg));
const started = performance.now();
let documents = 0;
let bytes = 0;
let chunks = 0;
const BATCH = 50;
while (chunks < target) {
  const inputs = [];
  for (let i = 0; i < BATCH; i++) {
    const { name, content } = corpus.document(documents++);
    bytes += Buffer.byteLength(content);
    inputs.push({ name, content, format: "md" });
  }
  const report = await service.knowledge.ingest("kb", inputs);
  if (report.failed.length > 0) throw new Error(`ingest failed: ${JSON.stringify(report.failed.slice(0, 3))}`);
  chunks += report.chunks;
}
await service.close();
const meta = { key: key.key, slug: "kb", chunks, documents, bytes, buildMs: Math.round(performance.now() - started) };
writeFileSync(metaOut, JSON.stringify(meta));
process.stdout.write(JSON.stringify(meta) + "\n");
