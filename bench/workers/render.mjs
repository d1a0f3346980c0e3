// Reply rendering in-process: the product's renderer against marked +
// DOMPurify with default settings on the same reply. Usage: render.mjs <json options>
import { join } from "node:path";
import { BENCH_DIST } from "../lib/build.mjs";
import { createCorpus, createReply } from "../lib/dataset.mjs";
import { summarize, timeCalls } from "../lib/stats.mjs";

const opts = JSON.parse(process.argv[2]);
const reply = createReply(createCorpus(opts.seed), { seed: opts.seed, words: opts.words });
const { createRenderer } = await import(join(BENCH_DIST, "bench-internals.js"));
const renderer = createRenderer();
// The event loop turns between calls like it does between requests (jsdom frees memory only then).
const product = await timeCalls(() => renderer.render(reply), { count: opts.count, warmup: opts.warmup, yieldBetween: true });

const [{ Marked }, { default: DOMPurify }] = await Promise.all([import("marked"), import("isomorphic-dompurify")]);
const marked = new Marked({ gfm: true, async: false });
const bare = await timeCalls(() => DOMPurify.sanitize(marked.parse(reply)), { count: opts.count, warmup: opts.warmup, yieldBetween: true });
const markedOnly = await timeCalls(() => marked.parse(reply), { count: opts.count, warmup: opts.warmup });

process.stdout.write(
  JSON.stringify({ words: reply.split(/\s+/).filter(Boolean).length, bytes: reply.length, product: summarize(product), bare: summarize(bare), markedOnly: summarize(markedOnly) }) + "\n",
);
