// Ingestion of a folder of Markdown into a fresh database, as `chatsvc ingest`
// does, reporting throughput and this process's peak RSS. Usage: ingest.mjs <db file or postgres:// URL> <folder>
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { BENCH_DIST } from "../lib/build.mjs";

const [db, folder] = process.argv.slice(2);
const { createChatService } = await import(join(BENCH_DIST, "index.js"));
const service = await createChatService({ ...(db.startsWith("postgres") ? { database: db } : { db }), env: {} });
const { organization } = await service.bootstrap({ organizationName: "Bench" });
await service.chatbots.create({ organization_id: organization.id, slug: "ingest", name: "Ingest" });
const rssBefore = process.memoryUsage().rss / 1048576;
// The longest the event loop waited: what a request arriving during ingestion would wait.
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
const started = performance.now();
const report = await service.knowledge.ingest("ingest", [folder]);
const ms = performance.now() - started;
delay.disable();
await service.close();
process.stdout.write(
  JSON.stringify({ ms, chunks: report.chunks, added: report.added, failed: report.failed.length, rssBeforeMb: rssBefore, maxRssMb: process.resourceUsage().maxRSS / 1024, maxStallMs: delay.max / 1e6, p99StallMs: delay.percentile(99) / 1e6 }) + "\n",
);
