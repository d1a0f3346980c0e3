import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_DIR } from "../lib/paths.mjs";
import { createDatabase, dropDatabase } from "../lib/pg.mjs";
import { runJsonWorker } from "../lib/proc.mjs";
import { row, unavailable } from "../lib/table.mjs";

const TARGET_P50 = { 10_000: 5, 100_000: 25 };
// Issue 19: p95 at most 30 ms at 300k chunks.
const TARGET_P95 = { 300_000: 30 };
// Issue 14: PostgreSQL retrieval p50 at most 25 ms at 100k chunks.
const TARGET_P50_POSTGRES = { 100_000: 25 };
// Issue 19: a process holding a 100k-chunk chatbot in at most 250 MB of RSS, on either engine.
const TARGET_RSS_MB = { 100_000: 250 };

/** The service's retrieval in its own process on a copy of the SQLite knowledge base (the bench's copy stays as built). */
async function sqliteService(ctx, kb, queries) {
  const dir = mkdtempSync(join(tmpdir(), "chatsvc-bench-rss-"));
  try {
    const db = join(dir, "kb.db");
    copyFileSync(kb.db, db);
    for (const suffix of ["-wal", "-shm"]) if (existsSync(kb.db + suffix)) copyFileSync(kb.db + suffix, db + suffix);
    return await runJsonWorker(join(BENCH_DIR, "workers", "retrieval-service.mjs"), [JSON.stringify({ db, slug: kb.slug, seed: ctx.seed, documents: kb.documents, queries })], { nodeArgs: ctx.nodeArgs });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A row for the RSS of a process holding a chatbot of `label` after its searches, or none without a target at that size. */
function rssRow(engine, label, size, r) {
  const target = TARGET_RSS_MB[size];
  if (!target) return [];
  return [
    row({
      id: "2",
      figure: `${engine === "postgres" ? "PostgreSQL: " : ""}RSS of a process holding a ${label.replace(" chunks", "-chunk")} chatbot, after ${r.queries} searches`,
      value: r.rss.totalMb,
      unit: "MB",
      target: `<= ${target} MB`,
      pass: r.rss.totalMb <= target,
      note: `${r.rss.anonMb.toFixed(0)} MB anonymous + ${r.rss.fileMb.toFixed(0)} MB file-backed`,
    }),
  ];
}

/** The service's retrieval on a copy of the PostgreSQL knowledge base of `size` chunks. */
async function postgresRetrieval(ctx, size, queries) {
  const kb = await ctx.postgresKnowledgeBase(size);
  const name = `bench_retrieval_${process.pid}`;
  const database = await createDatabase(name, kb.template);
  try {
    return await runJsonWorker(join(BENCH_DIR, "workers", "retrieval-service.mjs"), [JSON.stringify({ database, slug: kb.slug, seed: ctx.seed, documents: kb.documents, queries })], { nodeArgs: ctx.nodeArgs });
  } finally {
    await dropDatabase(name);
  }
}

/** Scenario 2: retrieval alone (hybrid, k = 8) at each size, with same-run baselines and recall@8; PostgreSQL beside SQLite at 10k and 100k. */
export async function run(ctx) {
  const rows = [];
  for (const size of ctx.sizes.retrieval) {
    const kb = await ctx.knowledgeBase(size);
    const r = await runJsonWorker(join(BENCH_DIR, "workers", "retrieval.mjs"), [
      JSON.stringify({
        db: kb.db,
        slug: kb.slug,
        seed: ctx.seed,
        documents: kb.documents,
        queries: ctx.quick ? 150 : size >= 300_000 ? 150 : 300,
        recallQueries: ctx.quick ? 40 : 100,
        baselineQueries: ctx.quick ? 60 : 100,
        vecQueries: size >= 100_000 ? 20 : 50,
      }),
    ], { nodeArgs: ctx.nodeArgs });
    ctx.details[`retrieval_${size}`] = r;
    const label = `${Math.round(r.chunks / 1000)}k chunks`;
    const target = TARGET_P50[size];
    rows.push(
      row({
        id: "2",
        figure: `retrieval p50, hybrid k=8, ${label}`,
        value: r.service.p50,
        unit: "ms",
        baseline: { label: "typed-array scan", value: r.scan.p50 },
        baselineUnit: "ms",
        ratio: r.service.p50 / r.scan.p50,
        target: target ? `< ${target} ms` : "(no target)",
        pass: target ? r.service.p50 < target : null,
        note: `p95 ${r.service.p95.toFixed(1)} ms, p99 ${r.service.p99.toFixed(1)} ms`,
      }),
      ...(TARGET_P95[size]
        ? [row({ id: "2", figure: `retrieval p95, hybrid k=8, ${label}`, value: r.service.p95, unit: "ms", target: `<= ${TARGET_P95[size]} ms`, pass: r.service.p95 <= TARGET_P95[size] })]
        : []),
      row({ id: "2", figure: `retrieval recall@8 vs exact float, ${label}`, value: r.recall, target: ">= 0.95", pass: r.recall >= 0.95 }),
      row({ id: "2", figure: `baseline: exact float KNN, sqlite-vec, ${label}`, value: r.sqliteVec.p50, unit: "ms" }),
      row({ id: "2", figure: `baseline: exact float scan, Float32Array, ${label}`, value: r.scan.p50, unit: "ms" }),
      row({ id: "2", figure: `baseline: raw FTS5 MATCH (same terms), ${label}`, value: r.fts.p50, unit: "ms", note: `p99 ${r.fts.p99.toFixed(1)} ms, ${r.ftsTerms.toFixed(1)} terms/query` }),
    );
    if (TARGET_RSS_MB[size]) {
      const held = await sqliteService(ctx, kb, ctx.quick ? 150 : 300);
      ctx.details[`retrieval_${size}_rss`] = held;
      rows.push(...rssRow("sqlite", label, size, held));
    }
    const figure = `PostgreSQL: retrieval p50, hybrid k=8, ${label}`;
    if (ctx.postgresUnavailable) {
      rows.push(unavailable("2", figure, `skipped: ${ctx.postgresUnavailable}`));
      continue;
    }
    // The same queries as the SQLite service above (same seed and count).
    const p = await postgresRetrieval(ctx, size, ctx.quick || size >= 300_000 ? 150 : 300);
    ctx.details[`retrieval_${size}_postgres`] = p;
    const pgTarget = TARGET_P50_POSTGRES[size];
    rows.push(
      row({
        id: "2",
        figure,
        value: p.service.p50,
        unit: "ms",
        baseline: { label: "SQLite", value: r.service.p50 },
        baselineUnit: "ms",
        ratio: p.service.p50 / r.service.p50,
        target: pgTarget ? `<= ${pgTarget} ms` : "(no target)",
        pass: pgTarget ? p.service.p50 <= pgTarget : null,
        note: `p95 ${p.service.p95.toFixed(1)} ms, p99 ${p.service.p99.toFixed(1)} ms; first search ${p.firstSearchMs} ms (loads the vector index)`,
      }),
      ...rssRow("postgres", label, size, p),
    );
  }
  return rows;
}
