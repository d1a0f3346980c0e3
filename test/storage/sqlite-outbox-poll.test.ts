// SQLite only: the webhook worker polls the outbox every second; with nothing to record or claim, a poll must not
// wait for the write lock, which a bulk write (ingestion on the writer thread) may hold for a while.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { questionKey } from "../../src/analytics/questions.js";
import { openSqliteStorage } from "../../src/storage/sqlite/index.js";
import { encodeWebhookEvent } from "../../src/webhooks/index.js";
import { testEngine } from "../support/database.js";
import { tempDir } from "../support/harness.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(testEngine === "postgres")("an idle webhook outbox poll on SQLite", () => {
  it("answers that nothing is due while another connection holds the write lock", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const file = join(dir.dir, "outbox.db");
    const storage = openSqliteStorage(file, { encodeEvent: encodeWebhookEvent, questionKey, busyTimeoutMs: 20 });
    cleanups.push(() => storage.close());
    const other = new Database(file);
    cleanups.push(() => other.close());
    other.exec("BEGIN IMMEDIATE");
    const now = Date.now();
    await expect(storage.outbox.settle([], { now, limit: 10, leaseUntil: now + 30_000 })).resolves.toEqual([]);
    other.exec("ROLLBACK");
  });
});
