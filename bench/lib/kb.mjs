import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { BENCH_DIR, CACHE_DIR, ROOT_DIR } from "./paths.mjs";
import { analyzeDatabase, createDatabase, databaseUrl, dropDatabase, listDatabases, renameDatabase } from "./pg.mjs";
import { runJsonWorker } from "./proc.mjs";

// What decides the stored bytes of a knowledge base: a change here rebuilds the cached databases.
const STORAGE_SOURCES = ["src/knowledge", "src/storage/sqlite", "drizzle", "src/core/config.ts", "bench/lib/dataset.mjs", "bench/workers/build-kb.mjs"];

function filesUnder(path) {
  const full = join(ROOT_DIR, path);
  if (!existsSync(full)) return [];
  if (statSync(full).isFile()) return [full];
  return readdirSync(full, { recursive: true })
    .map((f) => join(full, f))
    .filter((f) => statSync(f).isFile())
    .sort();
}

/** A short hash of the sources that shape stored knowledge bases (on SQLite, or on PostgreSQL with its engine's too). */
export function storageVersion(engine = "sqlite") {
  const hash = createHash("sha256");
  const sources = engine === "postgres" ? [...STORAGE_SOURCES, "src/storage/postgres"] : STORAGE_SOURCES;
  for (const file of sources.flatMap(filesUnder)) hash.update(relative(ROOT_DIR, file)).update(readFileSync(file));
  return hash.digest("hex").slice(0, 12);
}

/**
 * A database with one organisation, an API key and a chatbot `kb` holding about
 * `chunks` chunks of the seeded corpus, built once (by the product's own
 * ingestion, in a child process) and cached under `bench/.cache/`.
 *
 * @returns `{db, key, slug, chunks, documents, bytes}`
 */
export async function preparedKnowledgeBase({ chunks, seed, log }) {
  const dir = join(CACHE_DIR, "kb");
  mkdirSync(dir, { recursive: true });
  const name = `kb-s${seed}-c${chunks}-${storageVersion()}`;
  const db = join(dir, `${name}.db`);
  const meta = join(dir, `${name}.json`);
  if (existsSync(db) && existsSync(meta)) return { db, ...JSON.parse(readFileSync(meta, "utf8")), cached: true };
  // Stale versions of this size go: they can be hundreds of MB each.
  for (const f of readdirSync(dir)) if (f.startsWith(`kb-s${seed}-c${chunks}-`)) rmSync(join(dir, f), { force: true });
  log?.(`building knowledge base of ~${chunks} chunks (seed ${seed}); cached for later runs`);
  const tmp = `${db}.tmp`;
  rmSync(tmp, { force: true });
  const result = await runJsonWorker(join(BENCH_DIR, "workers", "build-kb.mjs"), [tmp, String(chunks), String(seed), `${meta}.tmp`], { timeoutMs: 3_600_000 });
  renameSync(tmp, db);
  renameSync(`${meta}.tmp`, meta);
  return { db, ...result, cached: false };
}

/**
 * The same knowledge base in a PostgreSQL database `bench_kb_…`, built once by
 * the product's ingestion and kept on the server (with its metadata under
 * `bench/.cache/kb`); runs work on copies of it (see `startChatsvc`).
 *
 * @returns `{template, url, key, slug, chunks, documents, bytes}`
 */
export async function preparedPostgresKnowledgeBase({ chunks, seed, log }) {
  const dir = join(CACHE_DIR, "kb");
  mkdirSync(dir, { recursive: true });
  const prefix = `bench_kb_s${seed}_c${chunks}_`;
  const template = `${prefix}${storageVersion("postgres")}`;
  const meta = join(dir, `${template}.json`);
  const existing = await listDatabases(prefix);
  if (existing.includes(template) && existsSync(meta)) return { template, url: databaseUrl(template), ...JSON.parse(readFileSync(meta, "utf8")), cached: true };
  for (const name of existing) {
    await dropDatabase(name);
    rmSync(join(dir, `${name}.json`), { force: true });
  }
  log?.(`building a PostgreSQL knowledge base of ~${chunks} chunks (seed ${seed}) in ${template}; kept for later runs`);
  const building = `${template}_tmp`;
  const url = await createDatabase(building);
  const result = await runJsonWorker(join(BENCH_DIR, "workers", "build-kb.mjs"), [url, String(chunks), String(seed), `${meta}.tmp`], { timeoutMs: 3_600_000 });
  await analyzeDatabase(building);
  await renameDatabase(building, template);
  renameSync(`${meta}.tmp`, meta);
  return { template, url: databaseUrl(template), ...result, cached: false };
}
