// Retrieval alone through the service, in its own process, on any database the
// service opens (the PostgreSQL side of scenario 2, and the resident memory of a
// process holding a chatbot on either engine; the SQLite side's latency and its
// baselines are retrieval.mjs). Usage: retrieval-service.mjs <json options>
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BENCH_DIST } from "../lib/build.mjs";
import { createCorpus, createQueries } from "../lib/dataset.mjs";
import { summarize, timeCalls } from "../lib/stats.mjs";

const opts = JSON.parse(process.argv[2]);
const { createChatService } = await import(join(BENCH_DIST, "index.js"));

const opened = performance.now();
const service = await createChatService({ ...(opts.database ? { database: opts.database } : { db: opts.db }), env: {}, logLevel: "warn" });
const corpus = createCorpus(opts.seed);
const queries = createQueries(corpus, { seed: opts.seed, count: opts.queries, documents: opts.documents });
const search = (i) => service.knowledge.search(opts.slug, queries[i % queries.length], { k: 8 });
// The first search loads the vector index from the database: timed apart from the steady state.
const first = performance.now();
await search(0);
const out = { openMs: Math.round(first - opened), firstSearchMs: Math.round(performance.now() - first), queries: queries.length };
const hits = [];
out.service = summarize(await timeCalls(async (i) => hits.push((await search(i)).length), { count: queries.length }));
out.emptyResults = hits.filter((h) => h === 0).length / hits.length;
// What the process holds while serving, after its searches: anonymous memory (heap, the vector index) and file-backed pages.
const status = readFileSync("/proc/self/status", "utf8");
const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
out.rss = { totalMb: kb("VmRSS") / 1024, anonMb: kb("RssAnon") / 1024, fileMb: kb("RssFile") / 1024 };
await service.close();
out.maxRssMb = process.resourceUsage().maxRSS / 1024;
process.stdout.write(JSON.stringify(out) + "\n");
