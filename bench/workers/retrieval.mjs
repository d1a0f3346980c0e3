// Retrieval alone, in its own process: the service's hybrid search against
// same-run baselines on the same vectors and chunks, and recall@8 against
// exact float search. Usage: retrieval.mjs <json options>
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import { BENCH_DIST } from "../lib/build.mjs";
import { createCorpus, createQueries, createTypoQueries } from "../lib/dataset.mjs";
import { summarize, timeCalls } from "../lib/stats.mjs";

const K = 8;
const opts = JSON.parse(process.argv[2]);
const { createChatService } = await import(join(BENCH_DIST, "index.js"));
const { hashEmbed, embeddingText, ftsQuery, ftsWords } = await import(join(BENCH_DIST, "bench-internals.js"));

const service = await createChatService({ db: opts.db, env: {} });
const sqlite = new Database(opts.db, { readonly: true });
sqlite.pragma("mmap_size = 1073741824");
sqliteVec.load(sqlite);
const botId = sqlite.prepare("SELECT id FROM chatbots WHERE slug = ?").get(opts.slug).id;

// Ground-truth vectors: the product's embedder over the product's embedding
// text of every chunk. Large bases read the stored float vectors instead (much
// faster) after checking a sample of them against the embedder.
const rows = sqlite.prepare("SELECT id, heading, content FROM chunks WHERE chatbot_id = ? ORDER BY id").all(botId);
const n = rows.length;
const ids = new Int32Array(n);
const dim = hashEmbed("dimension probe").length;
const matrix = new Float32Array(n * dim);
const t0 = performance.now();
let stored = [];
try {
  stored = sqlite.prepare("SELECT chunk_id, embedding FROM chunk_vectors WHERE chatbot_id = ? ORDER BY chunk_id").raw().all(botId);
} catch {
  // No float vector table of that shape: compute every vector below.
}
const useStored = stored.length === n && stored.every(([id, blob], i) => Number(id) === rows[i].id && blob.byteLength === dim * 4);
let maxDiff = 0;
rows.forEach((row, i) => {
  ids[i] = row.id;
  if (useStored) {
    const blob = stored[i][1];
    matrix.set(new Float32Array(blob.buffer, blob.byteOffset, dim), i * dim);
    if (i % Math.max(1, Math.floor(n / 200)) === 0) {
      const v = hashEmbed(embeddingText(row));
      for (let j = 0; j < dim; j++) maxDiff = Math.max(maxDiff, Math.abs(v[j] - matrix[i * dim + j]));
    }
  } else {
    matrix.set(hashEmbed(embeddingText(row)), i * dim);
  }
});
if (maxDiff > 1e-5) throw new Error(`stored vectors differ from the hash embedder's (max difference ${maxDiff})`);
const embedMs = performance.now() - t0;
rows.length = 0;
stored = [];

/** Exact top-k by cosine (vectors are unit length): the memory-bandwidth bound of a float scan. */
function exactTopK(q, k = K) {
  const m = matrix;
  const d = dim;
  const bestScore = new Float64Array(k).fill(-Infinity);
  const bestId = new Int32Array(k);
  for (let r = 0, off = 0; r < n; r++, off += d) {
    let s = 0;
    for (let j = 0; j < d; j++) s += m[off + j] * q[j];
    if (s > bestScore[k - 1]) {
      let p = k - 1;
      while (p > 0 && bestScore[p - 1] < s) {
        bestScore[p] = bestScore[p - 1];
        bestId[p] = bestId[p - 1];
        p--;
      }
      bestScore[p] = s;
      bestId[p] = ids[r];
    }
  }
  return Array.from(bestId);
}

const corpus = createCorpus(opts.seed);
const queries = createQueries(corpus, { seed: opts.seed, count: opts.queries, documents: opts.documents });
const typos = createTypoQueries(corpus, { seed: opts.seed, count: opts.recallQueries, documents: opts.documents });
const search = async (q, extra = {}) => await service.knowledge.search(opts.slug, q, { k: K, ...extra });

const out = { chunks: n, dimension: dim, vectorsFrom: useStored ? "chunk_vectors (checked)" : "hash embedder", vectorsMs: Math.round(embedMs), queries: queries.length };

// The service: hybrid search, k = 8, as the chat pipeline calls it.
const hits = [];
out.service = summarize(await timeCalls(async (i) => hits.push((await search(queries[i % queries.length])).length), { count: queries.length }));
out.emptyResults = hits.filter((h) => h === 0).length / hits.length;

// Recall@8 of the vector channel: misspelt queries leave full-text search and
// word coverage silent, so the service's order is its vector ranking.
let recall = 0;
for (const q of typos) {
  const truth = new Set(exactTopK(hashEmbed(q.slice(0, 2000))));
  const got = (await search(q, { includeBelowThreshold: true })).map((c) => c.chunk_id);
  recall += got.filter((id) => truth.has(id)).length / K;
}
out.recall = recall / typos.length;
out.recallQueries = typos.length;

// Baselines on the same data.
const baselineCount = Math.min(queries.length, opts.baselineQueries);
const qv = queries.map((q) => hashEmbed(q.slice(0, 2000)));
out.embedQuery = summarize(await timeCalls((i) => hashEmbed(queries[i % queries.length].slice(0, 2000)), { count: baselineCount }));
out.scan = summarize(await timeCalls((i) => exactTopK(qv[i % qv.length]), { count: baselineCount, warmup: 3 }));

const fts = sqlite.prepare("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT 32");
const matches = queries.map((q) => ftsQuery(ftsWords(q))).filter(Boolean);
out.fts = summarize(await timeCalls((i) => fts.all(matches[i % matches.length]), { count: Math.min(matches.length, baselineCount) }));
out.ftsTerms = matches.reduce((a, m) => a + m.split(" OR ").length, 0) / (matches.length || 1);

// sqlite-vec exact float KNN over the same vectors, in one partition of its own table.
const dir = mkdtempSync(join(tmpdir(), "chatsvc-bench-vec-"));
try {
  const vec = new Database(join(dir, "vec.db"));
  vec.pragma("journal_mode = WAL");
  vec.pragma("synchronous = NORMAL");
  vec.pragma("mmap_size = 1073741824");
  sqliteVec.load(vec);
  vec.exec(`CREATE VIRTUAL TABLE v USING vec0(chunk_id integer primary key, chatbot_id integer partition key, embedding float[${dim}] distance_metric=cosine)`);
  const insert = vec.prepare("INSERT INTO v (chunk_id, chatbot_id, embedding) VALUES (?, 1, ?)");
  vec.transaction(() => {
    for (let r = 0; r < n; r++) insert.run(BigInt(ids[r]), Buffer.from(matrix.buffer, r * dim * 4, dim * 4));
  })();
  const knn = vec.prepare("SELECT chunk_id FROM v WHERE embedding MATCH ? AND k = ? AND chatbot_id = 1 ORDER BY distance");
  const blobs = qv.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength));
  out.sqliteVec = summarize(await timeCalls((i) => knn.all(blobs[i % blobs.length], K), { count: Math.min(baselineCount, opts.vecQueries), warmup: 3 }));
  vec.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

await service.close();
sqlite.close();
out.maxRssMb = process.resourceUsage().maxRSS / 1024;
process.stdout.write(JSON.stringify(out) + "\n");
