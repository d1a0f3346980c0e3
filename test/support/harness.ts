import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChatServiceOptions } from "../../src/core/config.js";
import type { BootstrapResult } from "../../src/bootstrap.js";
import { startServer, type RunningServer } from "../../src/http/server.js";
import { loadHtmlRenderer } from "../../src/render/render-html.js";
import { createChatService, type ChatService } from "../../src/service.js";
import { afterAll, beforeAll, inject } from "vitest";
import { testDatabase, testEngine, type TestDatabase } from "./database.js";
import { HARNESS_TENANT, SEED_OPTIONS, seedFits } from "./seed.js";

export interface Harness {
  dir: string;
  /** The SQLite file, unused when the project runs on PostgreSQL (see `database`). */
  dbFile: string;
  /** The service's database, whichever engine the test project runs on; `cliArgs` point the CLI at it. */
  database: TestDatabase;
  service: ChatService;
  server: RunningServer;
  /** Base URL of the API, `http://127.0.0.1:<port>/api/v1`. */
  api: string;
  /** What first-run setup created: organisation, owner, `demo` bot and its key. */
  tenant: BootstrapResult;
  /** fetch against the API over the real socket, with the tenant's key unless `key` is given (null: none). */
  call(path: string, init?: RequestInit & { key?: string | null; json?: unknown }): Promise<ApiResponse>;
  close(): Promise<void>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** A temp directory removed by the returned cleanup. */
export function tempDir(prefix = "chatsvc-test-"): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Sends a request over a real socket and parses the JSON answer. */
export async function request(url: string, { key, json, headers, ...init }: RequestInit & { key?: string | null; json?: unknown } = {}): Promise<ApiResponse> {
  const h = new Headers(headers);
  if (key) h.set("authorization", `Bearer ${key}`);
  if (json !== undefined) {
    h.set("content-type", "application/json");
    init.body = JSON.stringify(json);
    init.method ??= "POST";
  }
  const res = await fetch(url, { ...init, headers: h }).catch((error: Error) => {
    // undici's "fetch failed" hides why (refused, reset, timed out) in `cause`: say it, so a failure can be told apart.
    throw new Error(`${init.method ?? "GET"} ${url}: ${error.message} (${String((error.cause as Error | undefined)?.message ?? error.cause)})`, { cause: error });
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/**
 * A fresh service on a fresh database (a SQLite file in a temp dir, or a
 * PostgreSQL database in the postgres test project), served over a real
 * socket on 127.0.0.1, with first-run setup done (on PostgreSQL usually by
 * cloning a database where it was done once, see seed.ts).
 */
export async function startHarness(options: ChatServiceOptions = {}): Promise<Harness> {
  const { dir, cleanup } = tempDir();
  // Request log lines at info would bury test output; failures (warn, error) still show.
  const serviceOptions = { ...SEED_OPTIONS, ...options };
  const fits = seedFits(serviceOptions);
  const seeded = testEngine === "postgres" && fits;
  const database = await testDatabase(dir, undefined, { seeded });
  const dbFile = database.options.db;
  const sqliteSeed = testEngine === "sqlite" && fits ? await seededSqliteFile() : undefined;
  if (sqliteSeed) writeFileSync(dbFile, sqliteSeed.bytes, { mode: 0o600 });
  // Harnesses render in this thread. Its first reply would load jsdom synchronously while the model call runs,
  // holding the event loop past a test's short model deadline on a busy machine: load it here, once per worker.
  if (serviceOptions.renderWorker === false) await loadHtmlRenderer();
  const service = await createChatService({ ...serviceOptions, ...database.options });
  const tenant = seeded ? inject("pgSeeded").tenant : (sqliteSeed?.tenant ?? (await service.bootstrap(HARNESS_TENANT)));
  const server = await startServer(service, { port: 0, onUnexpectedError: (e) => console.error(e) });
  const api = `${server.url}/api/v1`;
  return {
    dir,
    dbFile,
    database,
    service,
    server,
    api,
    tenant,
    call: (path, init = {}) => request(`${api}${path}`, { ...init, key: init.key === undefined ? tenant.key.key : init.key }),
    async close() {
      await server.close();
      await service.close();
      await database.drop();
      cleanup();
    },
  };
}

let seededSqlite: Promise<{ bytes: Buffer; tenant: BootstrapResult }> | undefined;

/**
 * This process's SQLite database after the harness's first-run setup, made once and written out for each harness:
 * the SQLite counterpart of the seeded PostgreSQL template (migrating and setting up were most of a harness's start).
 * Kept in memory, so nothing is left behind when the test runner ends its worker.
 */
function seededSqliteFile(): Promise<{ bytes: Buffer; tenant: BootstrapResult }> {
  return (seededSqlite ??= (async () => {
    const { dir, cleanup } = tempDir("chatsvc-seed-");
    try {
      const file = join(dir, "seeded.db");
      const service = await createChatService({ ...SEED_OPTIONS, db: file });
      let tenant: BootstrapResult;
      try {
        tenant = JSON.parse(JSON.stringify(await service.bootstrap(HARNESS_TENANT))) as BootstrapResult;
      } finally {
        await service.close();
      }
      // Closing the last connection writes the log into the file: the file is the whole database.
      if (existsSync(`${file}-wal`)) throw new Error(`${file}-wal is left after closing the seeded database`);
      return { bytes: readFileSync(file), tenant };
    } finally {
      cleanup();
    }
  })());
}

/**
 * One harness for every test of the enclosing `describe` (or file): started before its first test, closed after
 * its last. For tests that change nothing another test reads (refusals, reads), where a fresh database per test
 * costs a PostgreSQL clone each and proves nothing more; tests that store something keep their own harness.
 *
 * @example
 * const shared = sharedHarness();
 * it("401 without a key", async () => expect((await shared().call("/webhooks", { key: null })).status).toBe(401));
 */
export function sharedHarness(options: ChatServiceOptions = {}): () => Harness {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startHarness(options);
  });
  afterAll(async () => {
    await harness?.close();
  });
  return () => {
    if (!harness) throw new Error("sharedHarness() is used by tests of the describe block that declared it");
    return harness;
  };
}

/** A second organisation with its own user, key and chatbot, for isolation tests. */
export async function addTenant(service: ChatService, name = "Other") {
  const organization = await service.orgs.create({ name });
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, "-");
  const user = await service.users.create({ organization_id: organization.id, email: `owner@${slug}.test` });
  const chatbot = await service.chatbots.create({ organization_id: organization.id, slug: `${slug}-bot`, name: `${name} bot` });
  const key = await service.keys.create({ user_id: user.id, name: "test", accept_attribution: true });
  return { organization, user, chatbot, key };
}
