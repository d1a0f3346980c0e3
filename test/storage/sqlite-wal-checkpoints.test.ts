// SQLite only: during bulk writes WAL checkpoints run in a worker thread with its own connection, not in the committing one.
import { statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { questionKey } from "../../src/analytics/questions.js";
import { openSqliteStorage } from "../../src/storage/sqlite/index.js";
import { openDatabase } from "../../src/storage/sqlite/open.js";
import { createWalCheckpoints } from "../../src/storage/sqlite/wal-checkpoints.js";
import { encodeWebhookEvent } from "../../src/webhooks/index.js";
import { testEngine } from "../support/database.js";
import { tempDir } from "../support/harness.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function walDatabase() {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const file = join(dir.dir, "wal.db");
  const sqlite = new Database(file);
  cleanups.push(() => sqlite.close());
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.exec("CREATE TABLE t (x BLOB)");
  return { file, sqlite };
}

describe.skipIf(testEngine === "postgres")("SQLite WAL checkpoints during bulk writes", () => {
  it("copies the log into the database file from the worker while this connection's own checkpoints wait, and gives them back on close", async () => {
    const { file, sqlite } = walDatabase();
    const checkpoints = createWalCheckpoints(sqlite);
    // One write alone does not start it; a second in a row does.
    checkpoints.busy();
    expect(sqlite.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    checkpoints.busy();
    expect(sqlite.pragma("wal_autocheckpoint", { simple: true })).toBeGreaterThan(1000);
    const before = statSync(file).size;
    // About 400 pages: under the committing connection's threshold now, so only the worker copies them.
    const insert = sqlite.prepare("INSERT INTO t (x) VALUES (randomblob(4000))");
    sqlite.transaction(() => {
      for (let i = 0; i < 400; i++) insert.run();
    })();
    const deadline = Date.now() + 5_000;
    while (statSync(file).size < before + 400 * 4000 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(statSync(file).size).toBeGreaterThanOrEqual(before + 400 * 4000);
    await checkpoints.close();
    expect(sqlite.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
  });

  it("stops by itself once bulk writes pause", async () => {
    const { sqlite } = walDatabase();
    const checkpoints = createWalCheckpoints(sqlite);
    cleanups.push(() => checkpoints.close());
    checkpoints.busy();
    checkpoints.busy();
    expect(sqlite.pragma("wal_autocheckpoint", { simple: true })).toBeGreaterThan(1000);
    const deadline = Date.now() + 10_000;
    while (sqlite.pragma("wal_autocheckpoint", { simple: true }) !== 1000 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sqlite.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
  });

  it("cuts a log grown by a bulk write back once it starts over, instead of keeping the file at its largest", () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const file = join(dir.dir, "grown.db");
    const sqlite = openDatabase(file).$client;
    cleanups.push(() => sqlite.close());
    sqlite.exec("CREATE TABLE grown (x BLOB)");
    // Checkpointed by hand below, not after the commit.
    sqlite.pragma("wal_autocheckpoint = 0");
    const insert = sqlite.prepare("INSERT INTO grown (x) VALUES (randomblob(8000))");
    sqlite.transaction(() => {
      for (let i = 0; i < 3_000; i++) insert.run();
    })();
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(20 * 1024 * 1024);
    sqlite.pragma("wal_checkpoint(PASSIVE)");
    // The next write starts the log over.
    sqlite.exec("DELETE FROM grown WHERE rowid = 1");
    expect(statSync(`${file}-wal`).size).toBeLessThanOrEqual(16 * 1024 * 1024);
  });

  it("moves checkpoints to the worker during a burst of small commits (conversation starts, webhook settlements), not for a few", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const storage = openSqliteStorage(join(dir.dir, "burst.db"), { encodeEvent: encodeWebhookEvent, questionKey });
    cleanups.push(() => storage.close());
    const autocheckpoint = () => storage.sqlite.pragma("wal_autocheckpoint", { simple: true });
    // Each settlement of a finished attempt is its own commit (awaited one after another), as under steady webhook
    // traffic (an idle poll, with nothing to record or claim, commits nothing). The delivery it names is gone: nothing to count.
    const attempt = { delivery_id: 999_999, webhook_id: 1, status: "delivered" as const, attempts: 1, next_attempt_at: Date.now(), http_status: 200, error: null, first_attempt: true, gone: false, now: new Date().toISOString() };
    const settle = () => storage.outbox.settle([attempt], { now: Date.now(), limit: 1, leaseUntil: Date.now() + 1_000 });
    for (let i = 0; i < 3; i++) await settle();
    expect(autocheckpoint()).toBe(1000);
    // However slow the machine, a few hundred of them in a row make a burst.
    for (let i = 0; i < 300 && autocheckpoint() === 1000; i++) await settle();
    expect(autocheckpoint()).toBeGreaterThan(1000);
  });

  it("does nothing for an in-memory database", async () => {
    const sqlite = new Database(":memory:");
    cleanups.push(() => sqlite.close());
    const checkpoints = createWalCheckpoints(sqlite);
    checkpoints.busy();
    checkpoints.busy();
    expect(sqlite.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    await checkpoints.close();
  });
});
