#!/usr/bin/env -S npx tsx
// Answer-quality evaluation: `npm run eval` (all knowledge bases) or `npm run eval -- --quick`
// (fewer answers through the chat pipeline; still every retrieval question). Options:
// --kb=library,chatsvc-docs (some knowledge bases), --embedder=<spec> (default `hash`; e.g.
// `ollama:nomic-embed-text` with OLLAMA_HOST, or `openai:text-embedding-3-small` with
// OPENAI_BASE_URL and OPENAI_API_KEY), --threshold=<0..1> (overrides retrieval.threshold), --check (exit 1 when a figure falls below bench/eval/thresholds.json),
// --verbose (print each missed direct or dev question; holdout misses are never printed, so they
// cannot steer tuning).
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createChatService } from "../../src/service.js";

const EVAL_DIR = import.meta.dirname;
const RESULTS_DIR = join(EVAL_DIR, "..", "results");
const SETS = ["direct", "dev", "holdout"] as const;
type SetName = (typeof SETS)[number];
const TIMING_ROUNDS = 5;

interface QuestionFile {
  /** Documents folder relative to the KB folder; default `docs`. */
  docs?: string;
  /** [question, expected document]; `a.md|b.md` when either answers it. */
  direct: [string, string][];
  dev: [string, string][];
  holdout: [string, string][];
  offTopic: string[];
}

interface SetFigures {
  questions: number;
  hit1: number;
  hit3: number;
  mrr: number;
  /** Share answered (not the fallback) through the chat pipeline, citing the expected document. */
  answered: number;
}

interface KbFigures {
  kb: string;
  documents: number;
  chunks: number;
  sets: Record<SetName, SetFigures>;
  offTopic: { questions: number; refusedByRetrieval: number; refusedByAnswer: number };
  refusal: { precision: number; recall: number };
  retrievalMs: { p50: number; p90: number };
}

const args = process.argv.slice(2);
const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const flag = (name: string) => args.includes(`--${name}`);
const quick = flag("quick");
const verbose = flag("verbose");
const embedder = option("embedder") ?? "hash";
const only = option("kb")?.split(",");
const threshold = option("threshold");

const kbNames = readdirSync(join(EVAL_DIR, "kbs")).filter((n) => !only || only.includes(n));
const results: KbFigures[] = [];
for (const kb of kbNames) results.push(await evaluate(kb));

const overall = combine(results);
const report = { date: new Date().toISOString(), embedder, mode: quick ? "quick" : "full", overall, knowledgeBases: results };
mkdirSync(RESULTS_DIR, { recursive: true });
const name = `eval-${embedder.replace(/[^a-z0-9]+/gi, "-")}${quick ? "-quick" : ""}`;
writeFileSync(join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
const table = toMarkdown([...results, overall]);
writeFileSync(join(RESULTS_DIR, `${name}.md`), `${table}\n`);
process.stdout.write(`${table}\n\nwritten to bench/results/${name}.{json,md}\n`);

if (flag("check")) {
  const failures = checkThresholds(overall);
  for (const f of failures) process.stderr.write(`below threshold: ${f}\n`);
  if (failures.length > 0) process.exit(1);
}

async function evaluate(kb: string): Promise<KbFigures> {
  const kbDir = join(EVAL_DIR, "kbs", kb);
  const questions = JSON.parse(readFileSync(join(kbDir, "questions.json"), "utf8")) as QuestionFile;
  const docsDir = resolve(kbDir, questions.docs ?? "docs");
  const tmp = mkdtempSync(join(tmpdir(), "chatsvc-eval-"));
  const service = await createChatService({ env: {}, db: join(tmp, "eval.db"), embedModel: embedder, logLevel: "warn", renderWorker: false, ...(threshold ? { retrieval: { threshold: Number(threshold) } } : {}) });
  try {
    await service.bootstrap({ ingestDocs: false });
    const orgId = (await service.chatbots.get("demo")).organization_id;
    const ingested = await service.knowledge.ingest("demo", [docsDir]);
    if (ingested.failed.length > 0) throw new Error(`${kb}: ingestion failed: ${JSON.stringify(ingested.failed)}`);
    const search = async (q: string) => await service.knowledge.search("demo", q, { k: 6 });
    const ask = async (q: string) => {
      const { conversation_id } = await service.conversations.start(orgId, "demo", {});
      const { data } = await service.chat.send(orgId, "demo", conversation_id, { message: q });
      if (data.reply === null) throw new Error("the bot did not answer");
      return data;
    };

    const sets = {} as Record<SetName, SetFigures>;
    let falseRefusals = 0;
    for (const set of SETS) {
      const list = questions[set];
      let hit1 = 0;
      let hit3 = 0;
      let rr = 0;
      let answered = 0;
      let asked = 0;
      for (const [i, [q, doc]] of list.entries()) {
        const hits = await search(q);
        const docs = [...new Set(hits.map((h) => h.name))];
        // "a.md|b.md": either document answers the question.
        const accepted = doc.split("|");
        const rank = docs.findIndex((d) => accepted.includes(d));
        if (rank === 0) hit1++;
        if (rank >= 0 && rank < 3) hit3++;
        if (rank >= 0) rr += 1 / (rank + 1);
        if (verbose && set !== "holdout" && rank !== 0) process.stderr.write(`[${kb} ${set}] rank ${rank < 0 ? "-" : rank + 1}: ${q} -> ${docs.slice(0, 3).join(", ") || "(nothing)"}\n`);
        // The quick form sends every third question through the chat pipeline (jsdom rendering is the slow part).
        if (quick && i % 3 !== 0) continue;
        asked++;
        const reply = await ask(q);
        if (reply.cannot_answer) falseRefusals++;
        else if (reply.sources.some((s) => accepted.includes(s.name))) answered++;
      }
      sets[set] = { questions: list.length, hit1: ratio(hit1, list.length), hit3: ratio(hit3, list.length), mrr: ratio(rr, list.length), answered: ratio(answered, asked) };
    }

    let refusedByRetrieval = 0;
    let refusedByAnswer = 0;
    for (const q of questions.offTopic) {
      if ((await search(q)).length === 0) refusedByRetrieval++;
      const reply = await ask(q);
      if (reply.cannot_answer) refusedByAnswer++;
      else if (verbose) process.stderr.write(`[${kb} off-topic] answered: ${q}\n`);
    }
    const allRefused = refusedByAnswer + falseRefusals;
    // Timed apart, warm (first lookups fill caches), in rounds, so one busy moment on a shared host moves one sample in many.
    const all = [...SETS.flatMap((set) => questions[set].map(([q]) => q)), ...questions.offTopic];
    const timings: number[] = [];
    for (let round = 0; round < TIMING_ROUNDS; round++) {
      for (const q of all) {
        const started = performance.now();
        await search(q);
        timings.push(performance.now() - started);
      }
    }
    timings.sort((a, b) => a - b);
    return {
      kb,
      documents: ingested.added,
      chunks: ingested.chunks,
      sets,
      offTopic: { questions: questions.offTopic.length, refusedByRetrieval: ratio(refusedByRetrieval, questions.offTopic.length), refusedByAnswer: ratio(refusedByAnswer, questions.offTopic.length) },
      refusal: { precision: allRefused === 0 ? 1 : ratio(refusedByAnswer, allRefused), recall: ratio(refusedByAnswer, questions.offTopic.length) },
      retrievalMs: { p50: round(percentile(timings, 0.5), 2), p90: round(percentile(timings, 0.9), 2) },
    };
  } finally {
    await service.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Question-weighted means over knowledge bases; p50 is the median of the per-KB medians. */
function combine(all: KbFigures[]): KbFigures {
  const sets = {} as Record<SetName, SetFigures>;
  for (const set of SETS) {
    const n = all.reduce((s, r) => s + r.sets[set].questions, 0);
    const mean = (key: keyof SetFigures) => ratio(all.reduce((s, r) => s + r.sets[set][key] * r.sets[set].questions, 0), n);
    sets[set] = { questions: n, hit1: mean("hit1"), hit3: mean("hit3"), mrr: mean("mrr"), answered: mean("answered") };
  }
  const off = all.reduce((s, r) => s + r.offTopic.questions, 0);
  const offMean = (key: "refusedByRetrieval" | "refusedByAnswer") => ratio(all.reduce((s, r) => s + r.offTopic[key] * r.offTopic.questions, 0), off);
  const medians = all.map((r) => r.retrievalMs.p50).sort((a, b) => a - b);
  return {
    kb: "overall",
    documents: all.reduce((s, r) => s + r.documents, 0),
    chunks: all.reduce((s, r) => s + r.chunks, 0),
    sets,
    offTopic: { questions: off, refusedByRetrieval: offMean("refusedByRetrieval"), refusedByAnswer: offMean("refusedByAnswer") },
    refusal: { precision: ratio(all.reduce((s, r) => s + r.refusal.precision, 0), all.length), recall: offMean("refusedByAnswer") },
    retrievalMs: { p50: round(percentile(medians, 0.5), 2), p90: round(Math.max(...all.map((r) => r.retrievalMs.p90)), 2) },
  };
}

function checkThresholds(o: KbFigures): string[] {
  const thresholds = JSON.parse(readFileSync(join(EVAL_DIR, "thresholds.json"), "utf8")) as Record<string, number>;
  const figures: Record<string, number> = {
    "direct.hit1": o.sets.direct.hit1,
    "direct.hit3": o.sets.direct.hit3,
    "dev.hit3": o.sets.dev.hit3,
    "holdout.hit3": o.sets.holdout.hit3,
    "dev.hit1": o.sets.dev.hit1,
    "holdout.hit1": o.sets.holdout.hit1,
    "offTopic.refusedByRetrieval": o.offTopic.refusedByRetrieval,
    "offTopic.refusedByAnswer": o.offTopic.refusedByAnswer,
    "refusal.precision": o.refusal.precision,
  };
  const unknown = Object.keys(thresholds).filter((key) => !(key in figures));
  if (unknown.length > 0) throw new Error(`thresholds.json names unknown figures: ${unknown.join(", ")}`);
  return Object.entries(thresholds)
    .filter(([key, min]) => figures[key]! < min)
    .map(([key, min]) => `${key} ${figures[key]} < ${min}`);
}

function toMarkdown(rows: KbFigures[]): string {
  const head = "| knowledge base | docs/chunks | direct hit@1 / @3 | dev hit@1 / @3 / MRR | holdout hit@1 / @3 / MRR | answered (d/dev/h) | off-topic refused (retrieval / answer) | refusal precision | retrieval p50 / p90 ms |";
  const lines = rows.map((r) => {
    const s = r.sets;
    return `| ${r.kb} | ${r.documents}/${r.chunks} | ${f(s.direct.hit1)} / ${f(s.direct.hit3)} | ${f(s.dev.hit1)} / ${f(s.dev.hit3)} / ${f(s.dev.mrr)} | ${f(s.holdout.hit1)} / ${f(s.holdout.hit3)} / ${f(s.holdout.mrr)} | ${f(s.direct.answered)} / ${f(s.dev.answered)} / ${f(s.holdout.answered)} | ${f(r.offTopic.refusedByRetrieval)} / ${f(r.offTopic.refusedByAnswer)} | ${f(r.refusal.precision)} | ${r.retrievalMs.p50} / ${r.retrievalMs.p90} |`;
  });
  return [head, `|${"---|".repeat(9)}`, ...lines].join("\n");
}

function f(n: number): string {
  return n.toFixed(2);
}

function ratio(a: number, b: number): number {
  return b === 0 ? 0 : round(a / b, 3);
}

function round(n: number, digits: number): number {
  const m = 10 ** digits;
  return Math.round(n * m) / m;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}
