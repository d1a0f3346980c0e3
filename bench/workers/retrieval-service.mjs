// Retrieval alone through the service, in its own process, on any database the
// service opens (the PostgreSQL side of scenario 2; the SQLite side and its
// baselines are retrieval.mjs). Usage: retrieval-service.mjs <json options>
import { join } from "node:path";
import { BENCH_DIST } from "../lib/build.mjs";
import { createCorpus, createQueries } from "../lib/dataset.mjs";
import { summarize, timeCalls } from "../lib/stats.mjs";

const opts = JSON.parse(process.argv[2]);
const { createChatService } = await import(join(BENCH_DIST, "index.js"));

const opened = performance.now();
const service = await createChatService({ database: opts.database, env: {} });
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
await service.close();
out.maxRssMb = process.resourceUsage().maxRSS / 1024;
process.stdout.write(JSON.stringify(out) + "\n");
