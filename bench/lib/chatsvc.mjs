import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_DIST } from "./build.mjs";
import { launch } from "./proc.mjs";

/**
 * Runs the real CLI, `chatsvc serve --port 0`, as its own process on a private
 * copy of a prepared database (runs write conversations and credits, the
 * cached dataset stays as it was).
 *
 * @example
 * const server = await startChatsvc(kb, { env: { CHATSVC_WEBHOOKS_ALLOW_PRIVATE: "1" } });
 * await fetch(`${server.url}/api/v1/auth/test`, { headers: server.headers });
 * await server.stop();
 */
export async function startChatsvc(prepared, { env = {}, args = [], nodeArgs = [] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "chatsvc-bench-"));
  const db = join(dir, "chatsvc.db");
  copyFileSync(prepared.db, db);
  for (const suffix of ["-wal", "-shm"]) if (existsSync(prepared.db + suffix)) copyFileSync(prepared.db + suffix, db + suffix);
  const server = await launch(process.execPath, [...nodeArgs, join(BENCH_DIST, "cli.js"), "serve", "--port", "0", "--db", db, ...args], {
    ready: /listening on (http:\/\/\S+)/,
    // Rate limits stay on (their cost is measured) but far above what the bench sends.
    env: { NODE_ENV: "production", CHATSVC_RATE_LIMIT_PER_KEY: "1000000000", CHATSVC_RATE_LIMIT_PER_IP: "1000000000", ...env },
    cwd: dir,
  });
  return {
    ...server,
    dir,
    url: server.match[1],
    api: `${server.match[1]}/api/v1`,
    key: prepared.key,
    headers: { authorization: `Bearer ${prepared.key}`, "content-type": "application/json" },
    async stop() {
      const result = await server.stop();
      rmSync(dir, { recursive: true, force: true });
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
