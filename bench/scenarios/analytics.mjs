import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seedPostgres, seedSqlite, VOLUME } from "../lib/analytics-data.mjs";
import { BENCH_DIST } from "../lib/build.mjs";
import { api } from "../lib/chatsvc.mjs";
import { createDatabase, dropDatabase } from "../lib/pg.mjs";
import { launch } from "../lib/proc.mjs";
import { percentile, timeCalls } from "../lib/stats.mjs";
import { row, unavailable } from "../lib/table.mjs";

// Issue 17: each analytics call answers in at most 200 ms at 100k conversations and 1M messages.
const TARGET_MS = 200;

/** The calls timed: the defaults a dashboard opens with, and the widest ranges a report asks for. */
const CALLS = [
  ["GET /analytics (organisation, last 30 days by day)", "/analytics"],
  ["GET /analytics?chatbot=bench-big, 90 days by week", "/analytics?chatbot=bench-big&interval=week&since=-90"],
  ["GET /analytics/unanswered (organisation, last 30 days)", "/analytics/unanswered"],
  ["GET /analytics/unanswered?chatbot=bench-big, 90 days, per_page=100", "/analytics/unanswered?chatbot=bench-big&per_page=100&since=-90"],
  ["GET /analytics/sources?chatbot=bench-big", "/analytics/sources?chatbot=bench-big&per_page=100"],
];

const cli = (...args) => JSON.parse(execFileSync(process.execPath, [join(BENCH_DIST, "cli.js"), ...args], { encoding: "utf8", env: { ...process.env, NODE_ENV: "production" } }));

/** Seeds one engine, serves it with `chatsvc serve`, times each call over HTTP. */
async function measure(ctx, engine) {
  const dir = mkdtempSync(join(tmpdir(), "chatsvc-bench-analytics-"));
  const pgName = `bench_analytics_${process.pid}`;
  const where = engine === "sqlite" ? ["--db", join(dir, "chatsvc.db")] : ["--database-url", await createDatabase(pgName)];
  let server;
  try {
    const key = cli(...where, "init", "--json").key.key;
    const t = performance.now();
    const counts = engine === "sqlite" ? seedSqlite(where[1]) : await seedPostgres(where[1]);
    const seedSeconds = (performance.now() - t) / 1000;
    ctx.log(`analytics (${engine}): seeded ${counts.conversations.toLocaleString("en-US")} conversations, ${counts.messages.toLocaleString("en-US")} messages in ${seedSeconds.toFixed(1)} s`);
    server = await launch(process.execPath, [...ctx.nodeArgs, join(BENCH_DIST, "cli.js"), "serve", "--port", "0", ...where], {
      ready: /listening on (http:\/\/\S+)/,
      env: { NODE_ENV: "production", CHATSVC_RATE_LIMIT_PER_KEY: "1000000000", CHATSVC_RATE_LIMIT_PER_IP: "1000000000" },
      cwd: dir,
    });
    const target = { api: `${server.match[1]}/api/v1`, headers: { authorization: `Bearer ${key}` } };
    const since90 = new Date(Date.now() - VOLUME.days * 86_400_000).toISOString().slice(0, 10);
    const results = [];
    for (const [label, path] of CALLS) {
      const url = path.replace("since=-90", `since=${since90}`);
      const samples = await timeCalls(() => api(target, url), { count: ctx.quick ? 10 : 30, warmup: 3 });
      const sample = await api(target, url);
      results.push({ label, p50: percentile(samples, 50), p95: percentile(samples, 95), size: sample.meta?.total ?? sample.data.buckets?.length });
    }
    return { seedSeconds, counts, results };
  } finally {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
    if (engine === "postgres") await dropDatabase(pgName);
  }
}

/** Scenario 10: the analytics routes at 100k conversations and 1M messages, SQLite and PostgreSQL. */
export async function run(ctx) {
  const rows = [];
  const sqlite = await measure(ctx, "sqlite");
  ctx.details.analytics_sqlite = sqlite;
  const pgResult = ctx.postgresUnavailable ? null : await measure(ctx, "postgres");
  if (pgResult) ctx.details.analytics_postgres = pgResult;
  const volume = `${(sqlite.counts.conversations / 1000).toFixed(0)}k conversations, ${(sqlite.counts.messages / 1e6).toFixed(1)}M messages`;
  sqlite.results.forEach((s, i) => {
    rows.push(
      row({ id: "10", figure: `${s.label} p50, ${volume}`, value: s.p50, unit: "ms", target: `p95 <= ${TARGET_MS} ms`, pass: s.p95 <= TARGET_MS, note: `p95 ${s.p95.toFixed(1)} ms` }),
    );
    const figure = `PostgreSQL: ${s.label} p50`;
    if (!pgResult) {
      rows.push(unavailable("10", figure, `skipped: ${ctx.postgresUnavailable}`));
      return;
    }
    const p = pgResult.results[i];
    rows.push(
      row({
        id: "10",
        figure,
        value: p.p50,
        unit: "ms",
        baseline: { label: "SQLite", value: s.p50 },
        baselineUnit: "ms",
        ratio: p.p50 / s.p50,
        target: `p95 <= ${TARGET_MS} ms`,
        pass: p.p95 <= TARGET_MS,
        note: `p95 ${p.p95.toFixed(1)} ms`,
      }),
    );
  });
  return rows;
}
