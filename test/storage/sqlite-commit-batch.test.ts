// SQLite only: writes asked for in one turn of the event loop share a commit, each rolled back alone when it throws.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createCommitBatch } from "../../src/storage/sqlite/commit-batch.js";
import { testEngine } from "../support/database.js";
import { tempDir } from "../support/harness.js";

const cleanups: (() => unknown)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function open() {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const sqlite = new Database(join(dir.dir, "batch.db"));
  cleanups.push(() => sqlite.close());
  sqlite.pragma("journal_mode = WAL");
  sqlite.exec("CREATE TABLE rows (name TEXT NOT NULL UNIQUE)");
  return sqlite;
}

describe.skipIf(testEngine === "postgres")("SQLite commit batch", () => {
  it("commits the writes of one turn together, rolling back only the one that threw", async () => {
    const sqlite = open();
    const batched = createCommitBatch(sqlite);
    const insert = sqlite.prepare<[string]>("INSERT INTO rows (name) VALUES (?)");
    const other = new Database(sqlite.name, { readonly: true });
    cleanups.push(() => other.close());
    const countOther = other.prepare("SELECT count(*) FROM rows").pluck();
    // What another connection sees while each write runs: nothing committed before the batch's one commit.
    const seenElsewhere: unknown[] = [];
    const write = sqlite.transaction((names: string[]) => {
      seenElsewhere.push(countOther.get());
      for (const name of names) insert.run(name);
      return names.length;
    });

    const outcomes = await Promise.allSettled([
      batched(() => write(["a"])),
      // Its first row is written, then the duplicate fails: both must be undone, the others kept.
      batched(() => write(["b", "a"])),
      batched(() => write(["c", "d"])),
    ]);

    expect(outcomes[0]).toEqual({ status: "fulfilled", value: 1 });
    expect(outcomes[1]).toMatchObject({ status: "rejected", reason: { code: "SQLITE_CONSTRAINT_UNIQUE" } });
    expect(outcomes[2]).toEqual({ status: "fulfilled", value: 2 });
    expect(seenElsewhere).toEqual([0, 0, 0]);
    expect(sqlite.prepare("SELECT name FROM rows ORDER BY name").pluck().all()).toEqual(["a", "c", "d"]);
    expect(sqlite.inTransaction).toBe(false);
  });

  it("answers a write only once it is committed and visible to another connection", async () => {
    const sqlite = open();
    const batched = createCommitBatch(sqlite);
    const insert = sqlite.transaction((name: string) => sqlite.prepare("INSERT INTO rows (name) VALUES (?)").run(name).changes);
    const other = new Database(sqlite.name, { readonly: true });
    cleanups.push(() => other.close());

    expect(await batched(() => insert("x"))).toBe(1);
    expect(other.prepare("SELECT count(*) FROM rows").pluck().get()).toBe(1);
  });
});
