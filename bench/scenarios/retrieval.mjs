import { join } from "node:path";
import { BENCH_DIR } from "../lib/paths.mjs";
import { runJsonWorker } from "../lib/proc.mjs";
import { row } from "../lib/table.mjs";

const TARGET_P50 = { 10_000: 5, 100_000: 25 };

/** Scenario 2: retrieval alone (hybrid, k = 8) at each size, with same-run baselines and recall@8. */
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
        note: `p99 ${r.service.p99.toFixed(1)} ms`,
      }),
      row({ id: "2", figure: `retrieval recall@8 vs exact float, ${label}`, value: r.recall, target: ">= 0.95", pass: r.recall >= 0.95 }),
      row({ id: "2", figure: `baseline: exact float KNN, sqlite-vec, ${label}`, value: r.sqliteVec.p50, unit: "ms" }),
      row({ id: "2", figure: `baseline: exact float scan, Float32Array, ${label}`, value: r.scan.p50, unit: "ms" }),
      row({ id: "2", figure: `baseline: raw FTS5 MATCH (same terms), ${label}`, value: r.fts.p50, unit: "ms", note: `p99 ${r.fts.p99.toFixed(1)} ms, ${r.ftsTerms.toFixed(1)} terms/query` }),
    );
  }
  return rows;
}
