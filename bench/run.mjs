#!/usr/bin/env node
// chatsvc benchmark suite: `npm run bench` (full) or `npm run bench -- --quick`.
// PostgreSQL rows run beside the SQLite ones when a server answers at CHATSVC_BENCH_PG_URL
// (default postgres://postgres@127.0.0.1:5432/postgres; the bench creates databases bench_*).
// Options: --quick, --only=1,3,8 (scenario numbers), --seed=<n>, --max-chunks=<n>, --no-build (reuse bench/.cache/dist),
// --profile (servers and workers write V8 CPU profiles to bench/.cache/profiles; read them with
// `node bench/profile-summary.mjs <file>`), --update-readme (puts the table between the
// `<!-- bench:start -->` and `<!-- bench:end -->` markers of README.md).
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { buildForBench } from "./lib/build.mjs";
import { DEFAULT_SEED } from "./lib/dataset.mjs";
import { preparedKnowledgeBase, preparedPostgresKnowledgeBase } from "./lib/kb.mjs";
import { CACHE_DIR, RESULTS_DIR, ROOT_DIR } from "./lib/paths.mjs";
import { PG_SERVER_URL, postgresUnavailable } from "./lib/pg.mjs";
import { toMarkdown, unavailable } from "./lib/table.mjs";

const args = process.argv.slice(2);
const flag = (name) => args.includes(`--${name}`);
const option = (name) => args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const quick = flag("quick");
const only = option("only")?.split(",").map(Number);
const seed = Number(option("seed") ?? DEFAULT_SEED);
const log = (message) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

const SCENARIOS = [
  { id: 1, name: "GET /auth/test throughput", module: "./scenarios/http.mjs" },
  { id: 2, name: "retrieval", module: "./scenarios/retrieval.mjs" },
  { id: 3, name: "send-message", module: "./scenarios/send.mjs" },
  { id: 4, name: "reply rendering", module: "./scenarios/render.mjs" },
  { id: 5, name: "ingestion", module: "./scenarios/ingest.mjs" },
  { id: 6, name: "webhooks", module: "./scenarios/webhooks.mjs" },
  { id: 8, name: "streaming", module: "./scenarios/streaming.mjs" },
  { id: 9, name: "npx first run", module: "./scenarios/npx.mjs" },
  { id: 10, name: "analytics at 100k conversations", module: "./scenarios/analytics.mjs" },
  { id: 11, name: "console pages at 10k conversations", module: "./scenarios/console.mjs" },
  // Last: it reports the peak RSS the load scenarios saw.
  { id: 7, name: "memory and start-up", module: "./scenarios/memory.mjs" },
];

const started = Date.now();
const git = (...a) => {
  try {
    return execFileSync("git", a, { cwd: ROOT_DIR, encoding: "utf8" }).trim();
  } catch {
    return null;
  }
};
const meta = {
  date: new Date().toISOString(),
  mode: quick ? "quick" : "full",
  scenarios: only ?? "all",
  maxChunks: option("max-chunks") ? Number(option("max-chunks")) : null,
  seed,
  node: process.version,
  platform: `${os.platform()} ${os.release()} ${os.arch()}`,
  cpu: `${os.cpus()[0]?.model ?? "unknown"} x ${os.availableParallelism()}`,
  memoryGb: Math.round(os.totalmem() / 2 ** 30),
  loadAverageAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
  commit: git("rev-parse", "--short", "HEAD"),
  uncommittedFiles: git("status", "--porcelain")?.split("\n").filter(Boolean).length ?? null,
  datasets: {},
};

if (!flag("no-build")) {
  log("building the package (tsup, same settings as npm run build, without .d.ts, source maps or the console bundle)");
  meta.buildMs = await buildForBench();
}

// --max-chunks=<n> leaves out the larger knowledge bases (a 300k-chunk one takes minutes to build).
const maxChunks = Number(option("max-chunks") ?? Infinity);
const sizes = Object.fromEntries(
  Object.entries(quick ? { retrieval: [10_000], send: [10_000] } : { retrieval: [10_000, 100_000, 300_000], send: [10_000, 100_000] }).map(([k, list]) => [k, list.filter((n) => n <= maxChunks)]),
);
const kbs = new Map();
const pgKbs = new Map();
const pgReason = await postgresUnavailable();
meta.postgres = pgReason ?? new URL(PG_SERVER_URL).host;
log(pgReason ? `PostgreSQL rows skipped: ${pgReason}` : `PostgreSQL rows beside SQLite: ${meta.postgres}`);
const profileDir = join(CACHE_DIR, "profiles");
const ctx = {
  quick,
  // Extra node flags for the processes under test (servers and workers).
  nodeArgs: flag("profile") ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
  seed,
  sizes,
  log,
  details: {},
  loadRss: {},
  noteLoadRss(label, mb) {
    ctx.loadRss[label] = mb;
  },
  async knowledgeBase(chunks) {
    if (!kbs.has(chunks)) {
      const kb = await preparedKnowledgeBase({ chunks, seed, log });
      kbs.set(chunks, kb);
      meta.datasets[`kb_${chunks}`] = { chunks: kb.chunks, documents: kb.documents, mb: Math.round(kb.bytes / 1048576), buildMs: kb.buildMs, cached: kb.cached };
    }
    return kbs.get(chunks);
  },
  /** Why PostgreSQL rows cannot run this time, or null. */
  postgresUnavailable: pgReason,
  async postgresKnowledgeBase(chunks) {
    if (!pgKbs.has(chunks)) {
      const kb = await preparedPostgresKnowledgeBase({ chunks, seed, log });
      pgKbs.set(chunks, kb);
      meta.datasets[`pg_kb_${chunks}`] = { chunks: kb.chunks, documents: kb.documents, mb: Math.round(kb.bytes / 1048576), buildMs: kb.buildMs, cached: kb.cached };
    }
    return pgKbs.get(chunks);
  },
};

const rows = [];
const timings = {};
for (const scenario of SCENARIOS) {
  if (only && !only.includes(scenario.id)) continue;
  log(`scenario ${scenario.id}: ${scenario.name}`);
  const t = Date.now();
  const load = os.loadavg()[0];
  try {
    const { run } = await import(scenario.module);
    rows.push(...(await run(ctx)));
  } catch (error) {
    log(`scenario ${scenario.id} could not run: ${error.stack ?? error}`);
    rows.push(unavailable(String(scenario.id), scenario.name, String(error.message ?? error).split("\n")[0].slice(0, 200)));
  }
  timings[scenario.id] = { seconds: Math.round((Date.now() - t) / 100) / 10, loadAverage1m: Math.round(load * 100) / 100 };
}
meta.loadAverageAtEnd = os.loadavg().map((l) => Math.round(l * 100) / 100);
meta.scenarioTimings = timings;
meta.totalSeconds = Math.round((Date.now() - started) / 1000);

const table = toMarkdown(rows);
const datasets = Object.entries(meta.datasets).map(([k, d]) => `${k}: ${d.chunks.toLocaleString("en-US")} chunks / ${d.documents.toLocaleString("en-US")} docs / ${d.mb} MB`).join("; ");
const header =
  `chatsvc benchmark (${meta.mode}${only ? `, scenarios ${only.join(",")} only` : ""}${Number.isFinite(maxChunks) ? `, up to ${maxChunks.toLocaleString("en-US")} chunks` : ""}), ${meta.date}, commit ${meta.commit}${meta.uncommittedFiles ? ` + ${meta.uncommittedFiles} uncommitted files` : ""}\n` +
  `Node ${meta.node}, ${meta.cpu}, ${meta.memoryGb} GB, ${meta.platform}; PostgreSQL: ${pgReason ? `skipped (${pgReason})` : meta.postgres}; load average ${meta.loadAverageAtStart.join(" ")} at start, ${meta.loadAverageAtEnd.join(" ")} at end; seed ${seed}\n` +
  `Datasets: ${datasets || "none"}; ${meta.totalSeconds} s in all.`;
mkdirSync(RESULTS_DIR, { recursive: true });
writeFileSync(join(RESULTS_DIR, "latest.json"), JSON.stringify({ meta, rows, details: ctx.details }, null, 2) + "\n");
// latest-<mode> too, so a quick regression run does not hide the last full table
// (a run of some scenarios or sizes only replaces neither).
const partial = Boolean(only) || Number.isFinite(maxChunks);
for (const name of partial ? ["latest"] : ["latest", `latest-${meta.mode}`]) {
  if (name !== "latest") writeFileSync(join(RESULTS_DIR, `${name}.json`), JSON.stringify({ meta, rows, details: ctx.details }, null, 2) + "\n");
  writeFileSync(join(RESULTS_DIR, `${name}.md`), `${header.split("\n").join("  \n")}\n\n${table}\n`);
}
process.stdout.write(`\n${header}\n\n${table}\n`);
if (flag("update-readme") && partial) log("--update-readme ignored: the README shows whole runs, not --only or --max-chunks ones");
else if (flag("update-readme")) {
  const readme = join(ROOT_DIR, "README.md");
  const text = readFileSync(readme, "utf8");
  const block = /<!-- bench:start -->[\s\S]*?<!-- bench:end -->/;
  if (block.test(text)) writeFileSync(readme, text.replace(block, `<!-- bench:start -->\n${header.split("\n").join("  \n")}\n\n${table}\n<!-- bench:end -->`));
  else log("README.md has no <!-- bench:start --> / <!-- bench:end --> markers; left unchanged");
}
const failed = rows.filter((r) => r.pass === false).length;
const missing = rows.filter((r) => r.note?.startsWith("n/a")).length;
log(`${rows.filter((r) => r.pass === true).length} targets met, ${failed} missed, ${missing} not measured; results in bench/results/latest.{json,md}`);
