// SQLite only: the data version that key revocation across processes rests on, read through the WAL-index header.
import { stat } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { questionKey } from "../../src/analytics/questions.js";
import { createDataVersion } from "../../src/storage/sqlite/data-version.js";
import { openSqliteStorage } from "../../src/storage/sqlite/index.js";
import { encodeWebhookEvent } from "../../src/webhooks/index.js";
import { openDatabase, type Sqlite } from "../../src/storage/sqlite/open.js";
import { testEngine } from "../support/database.js";
import { tempDir } from "../support/harness.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function open(): { file: string; sqlite: Sqlite } {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const file = join(dir.dir, "version.db");
  const sqlite = openDatabase(file).$client;
  cleanups.push(() => sqlite.close());
  return { file, sqlite };
}

/** Counts the pragma's runs: the header read is meant to spare them while nothing commits. */
function countPragmas(sqlite: Sqlite): { runs: number } {
  const counter = { runs: 0 };
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((source: string) => {
    const statement = prepare(source);
    if (source !== "PRAGMA data_version") return statement;
    const get = statement.get.bind(statement);
    statement.get = ((...args: []) => (counter.runs++, get(...args))) as typeof statement.get;
    return statement;
  }) as typeof sqlite.prepare;
  return counter;
}

describe.skipIf(testEngine === "postgres")("SQLite data version", () => {
  it("moves on the next read after every commit of another connection, as the pragma does, and not for this connection's own", () => {
    const { file, sqlite } = open();
    const version = createDataVersion(sqlite, file);
    cleanups.push(() => version.close());
    const other = new Database(file);
    cleanups.push(() => other.close());
    other.exec("CREATE TABLE t (v INTEGER)");
    const pragma = sqlite.prepare("PRAGMA data_version").pluck();
    let last = version.read();
    for (let i = 0; i < 50; i++) {
      other.prepare("INSERT INTO t VALUES (?)").run(i);
      // Checkpoints restart the log now and then: the next commit writes from its first frame again.
      if (i % 10 === 9) other.pragma("wal_checkpoint(RESTART)");
      const now = version.read();
      expect(now).not.toBe(last);
      expect(now).toBe(pragma.get());
      last = now;
    }
    sqlite.exec("INSERT INTO t VALUES (100)");
    expect(version.read()).toBe(last);
  });

  it("runs the pragma only when the header shows a commit since the last read", () => {
    const { file, sqlite } = open();
    const pragmas = countPragmas(sqlite);
    const version = createDataVersion(sqlite, file);
    cleanups.push(() => version.close());
    for (let i = 0; i < 100; i++) version.read();
    expect(pragmas.runs).toBe(1);
    const other = new Database(file);
    cleanups.push(() => other.close());
    other.exec("CREATE TABLE t (v INTEGER)");
    version.read();
    version.read();
    expect(pragmas.runs).toBe(2);
  });

  it("sees another process's commit on the first read after it, whichever phase of the event loop the read before ran in", async () => {
    const { file } = open();
    const storage = openSqliteStorage(file, { encodeEvent: encodeWebhookEvent, questionKey });
    cleanups.push(() => storage.close());
    const other = new Database(file);
    cleanups.push(() => other.close());
    other.exec("CREATE TABLE t (v INTEGER)");
    // A read made by a continuation in the check phase (a shared commit settles there); then the CLI revokes
    // a key, and the loop's next I/O callback (a request arriving) must see it.
    await new Promise((resolve) => setImmediate(resolve));
    const before = storage.changes.version("keys");
    other.prepare("INSERT INTO t VALUES (1)").run();
    await new Promise((resolve) => stat(file, resolve));
    expect(storage.changes.version("keys")).not.toBe(before);
  });
});
