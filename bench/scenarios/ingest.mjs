import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCorpus } from "../lib/dataset.mjs";
import { BENCH_DIR } from "../lib/paths.mjs";
import { createDatabase, dropDatabase } from "../lib/pg.mjs";
import { runJsonWorker } from "../lib/proc.mjs";
import { row, unavailable } from "../lib/table.mjs";

/** Scenario 5: ingestion of generated Markdown files with the `hash` embedder, into SQLite, then into an empty PostgreSQL database. */
export async function run(ctx) {
  const targetMb = ctx.quick ? 5 : 50;
  const dir = mkdtempSync(join(tmpdir(), "chatsvc-bench-ingest-"));
  try {
    const folder = join(dir, "docs");
    mkdirSync(folder);
    const corpus = createCorpus(ctx.seed + 5);
    let bytes = 0;
    for (let i = 0; bytes < targetMb * 1048576; i++) {
      const { name, content } = corpus.document(i);
      // Sub-folders of 500 files, like real documentation trees.
      const sub = join(folder, `part-${Math.floor(i / 500)}`);
      if (i % 500 === 0) mkdirSync(sub);
      writeFileSync(join(sub, name), content);
      bytes += Buffer.byteLength(content);
    }
    const r = await runJsonWorker(join(BENCH_DIR, "workers", "ingest.mjs"), [join(dir, "bench.db"), folder], { timeoutMs: 1_800_000, nodeArgs: ctx.nodeArgs });
    const mbps = bytes / 1048576 / (r.ms / 1000);
    const cps = r.chunks / (r.ms / 1000);
    ctx.details.ingest = { ...r, bytes };
    const input = `${(bytes / 1048576).toFixed(0)} MB`;
    const postgres = await ingestIntoPostgres(ctx, folder, { bytes, sqlite: { cps, maxStallMs: r.maxStallMs, maxRssMb: r.maxRssMb }, input });
    return [
      row({ id: "5", figure: `ingestion throughput, ${input} Markdown (${r.added} files)`, value: mbps, unit: "MB/s", target: ">= 2 MB/s", pass: mbps >= 2 && r.failed === 0 }),
      row({ id: "5", figure: `ingestion chunks/s (${r.chunks.toLocaleString("en-US")} chunks)`, value: cps, unit: "chunks/s", target: ">= 5,000/s", pass: cps >= 5000 }),
      row({
        id: "5",
        figure: "longest event-loop stall during ingestion",
        value: r.maxStallMs,
        unit: "ms",
        target: "<= 50 ms",
        pass: r.maxStallMs <= 50,
        note: `p99 ${r.p99StallMs.toFixed(0)} ms (monitorEventLoopDelay)`,
      }),
      row({
        id: "5",
        figure: `ingestion peak RSS, ${input}`,
        value: r.maxRssMb,
        unit: "MB",
        target: `< 400 MB${ctx.quick ? " (for 50 MB)" : ""}`,
        pass: r.maxRssMb < 400,
        note: `${r.rssBeforeMb.toFixed(0)} MB before ingesting`,
      }),
      ...postgres,
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same folder into an empty PostgreSQL database (a copy of none), dropped afterwards. */
async function ingestIntoPostgres(ctx, folder, { bytes, sqlite, input }) {
  const figures = ["ingestion chunks/s", "longest event-loop stall during ingestion", "ingestion peak RSS"];
  if (ctx.postgresUnavailable) return figures.map((f) => unavailable("5", `PostgreSQL: ${f}`, `skipped: ${ctx.postgresUnavailable}`));
  const name = `bench_ingest_${process.pid}`;
  const url = await createDatabase(name);
  try {
    const r = await runJsonWorker(join(BENCH_DIR, "workers", "ingest.mjs"), [url, folder], { timeoutMs: 1_800_000, nodeArgs: ctx.nodeArgs });
    const cps = r.chunks / (r.ms / 1000);
    ctx.details.ingestPostgres = { ...r, bytes };
    return [
      row({
        id: "5",
        figure: `PostgreSQL: ingestion chunks/s (${r.chunks.toLocaleString("en-US")} chunks)`,
        value: cps,
        unit: "chunks/s",
        baseline: { label: "SQLite", value: sqlite.cps },
        ratio: cps / sqlite.cps,
        target: "(no target)",
        note: `${(bytes / 1048576 / (r.ms / 1000)).toFixed(2)} MB/s${r.failed ? `; ${r.failed} files failed` : ""}`,
      }),
      row({
        id: "5",
        figure: "PostgreSQL: longest event-loop stall during ingestion",
        value: r.maxStallMs,
        unit: "ms",
        baseline: { label: "SQLite", value: sqlite.maxStallMs },
        target: "<= 50 ms",
        pass: r.maxStallMs <= 50,
        note: `p99 ${r.p99StallMs.toFixed(0)} ms`,
      }),
      row({
        id: "5",
        figure: `PostgreSQL: ingestion peak RSS, ${input}`,
        value: r.maxRssMb,
        unit: "MB",
        baseline: { label: "SQLite", value: sqlite.maxRssMb },
        target: `< 400 MB${ctx.quick ? " (for 50 MB)" : ""}`,
        pass: r.maxRssMb < 400,
      }),
    ];
  } finally {
    await dropDatabase(name);
  }
}
