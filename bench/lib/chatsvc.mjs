import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_DIST } from "./build.mjs";
import { createDatabase, dropDatabase } from "./pg.mjs";
import { launch } from "./proc.mjs";

let runDatabases = 0;

/**
 * Runs the real CLI, `chatsvc serve --port 0`, as its own process on a private
 * copy of a prepared database (runs write conversations and credits, the
 * cached dataset stays as it was). A PostgreSQL knowledge base (see
 * `preparedPostgresKnowledgeBase`) is copied into a database of its own
 * instead, or `database` names one another instance already serves, so
 * several instances share it.
 *
 * @example
 * const server = await startChatsvc(kb, { env: { CHATSVC_WEBHOOKS_ALLOW_PRIVATE: "1" } });
 * await fetch(`${server.url}/api/v1/auth/test`, { headers: server.headers });
 * await server.stop();
 */
export async function startChatsvc(prepared, { env = {}, args = [], nodeArgs = [], database } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "chatsvc-bench-"));
  const db = join(dir, "chatsvc.db");
  let owned = null;
  if (prepared.template) {
    if (!database) {
      owned = `bench_run_${process.pid}_${++runDatabases}`;
      database = await createDatabase(owned, prepared.template);
    }
  } else {
    copyFileSync(prepared.db, db);
    for (const suffix of ["-wal", "-shm"]) if (existsSync(prepared.db + suffix)) copyFileSync(prepared.db + suffix, db + suffix);
  }
  const where = database ? ["--database-url", database] : ["--db", db];
  let server;
  try {
    server = await launch(process.execPath, [...nodeArgs, join(BENCH_DIST, "cli.js"), "serve", "--port", "0", ...where, ...args], {
      ready: /listening on (http:\/\/\S+)/,
      // Rate limits stay on (their cost is measured) but far above what the bench sends.
      env: { NODE_ENV: "production", CHATSVC_RATE_LIMIT_PER_KEY: "1000000000", CHATSVC_RATE_LIMIT_PER_IP: "1000000000", ...env },
      cwd: dir,
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    if (owned) await dropDatabase(owned);
    throw error;
  }
  return {
    ...server,
    dir,
    database,
    url: server.match[1],
    api: `${server.match[1]}/api/v1`,
    key: prepared.key,
    headers: { authorization: `Bearer ${prepared.key}`, "content-type": "application/json" },
    async stop() {
      const result = await server.stop();
      rmSync(dir, { recursive: true, force: true });
      if (owned) await dropDatabase(owned);
      return result;
    },
  };
}

/** `fetch` to the API answering the parsed envelope; throws with the body on a non-2xx answer. */
export async function api(server, path, { method = "GET", json, headers = {} } = {}) {
  const res = await fetch(`${server.api}${path}`, { method, headers: { ...server.headers, ...headers }, body: json === undefined ? undefined : JSON.stringify(json) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}
