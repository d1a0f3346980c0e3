// The console's sign-in storage on each engine, through core/storage's interface only:
// links work once and only before they expire, sessions end when idle or deleted.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Storage } from "../../src/core/storage/index.js";
import { openPostgresStorage } from "../../src/storage/postgres/index.js";
import { openSqliteStorage } from "../../src/storage/sqlite/index.js";
import { encodeWebhookEvent } from "../../src/webhooks/index.js";
import { testDatabase, testEngine } from "../support/database.js";
import { tempDir } from "../support/harness.js";
import { seedTenant } from "../support/storage-seed.js";
import { questionKey } from "../../src/analytics/questions.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function open(): Promise<Storage> {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  let storage: Storage;
  if (testEngine === "postgres") {
    const database = await testDatabase(dir.dir);
    cleanups.push(database.drop);
    storage = await openPostgresStorage(database.options.database!, { encodeEvent: encodeWebhookEvent, questionKey });
  } else {
    storage = openSqliteStorage(join(dir.dir, "console.db"), { encodeEvent: encodeWebhookEvent, questionKey });
  }
  cleanups.push(() => storage.close());
  return storage;
}

const T0 = "2026-01-02T03:00:00.000Z";
const T1 = "2026-01-02T03:05:00.000Z";
const T2 = "2026-01-02T03:20:00.000Z";

describe(`console session storage: ${testEngine}`, () => {
  async function withUser() {
    const storage = await open();
    const { org } = await seedTenant(storage, { at: T0 });
    const user = await storage.users.create({ organization_id: org.id, email: "ops@acme.test", name: null, created_at: T0 });
    if (typeof user === "string") throw new Error(user);
    return { storage, org, user, who: { user_id: user.id, organization_id: org.id, email: "ops@acme.test" } };
  }

  it("gives a link's user once, while it has not expired; racing takers get it once", async () => {
    const { storage, who, user } = await withUser();
    const sessions = storage.consoleSessions;
    await sessions.createLoginToken({ token_hash: "a".repeat(64), user_id: user.id, expires_at: T2, created_at: T0 });
    const taken = await Promise.all([1, 2, 3].map(() => sessions.consumeLoginToken("a".repeat(64), T1)));
    expect(taken.filter(Boolean)).toEqual([who]);

    await sessions.createLoginToken({ token_hash: "b".repeat(64), user_id: user.id, expires_at: T1, created_at: T0 });
    expect(await sessions.consumeLoginToken("b".repeat(64), T2)).toBeUndefined();
    expect(await sessions.consumeLoginToken("c".repeat(64), T0)).toBeUndefined();
  });

  it("resumes a session seen after the idle limit, keeps it alive, and forgets it once deleted", async () => {
    const { storage, who, user } = await withUser();
    const sessions = storage.consoleSessions;
    await sessions.createSession({ session_hash: "s".repeat(64), user_id: user.id, created_at: T0 });
    expect(await sessions.resumeSession("s".repeat(64), T1, "2026-01-02T02:00:00.000Z")).toEqual(who);
    // Seen at T1 now: an idle limit starting after T0 but before T1 still lets it in.
    expect(await sessions.resumeSession("s".repeat(64), T2, "2026-01-02T03:01:00.000Z")).toEqual(who);
    // Idle since before the limit: refused.
    expect(await sessions.resumeSession("s".repeat(64), T2, "2026-01-02T03:30:00.000Z")).toBeUndefined();
    expect(await sessions.deleteSession("s".repeat(64))).toBe(true);
    expect(await sessions.deleteSession("s".repeat(64))).toBe(false);
    expect(await sessions.resumeSession("s".repeat(64), T2, T0)).toBeUndefined();
  });

  it("prunes expired links and idle sessions only", async () => {
    const { storage, user } = await withUser();
    const sessions = storage.consoleSessions;
    await sessions.createLoginToken({ token_hash: "old".padEnd(64, "0"), user_id: user.id, expires_at: T1, created_at: T0 });
    await sessions.createLoginToken({ token_hash: "new".padEnd(64, "0"), user_id: user.id, expires_at: T2, created_at: T0 });
    await sessions.createSession({ session_hash: "idle".padEnd(64, "0"), user_id: user.id, created_at: T0 });
    await sessions.createSession({ session_hash: "busy".padEnd(64, "0"), user_id: user.id, created_at: T1 });
    expect(await sessions.prune(T1, T0)).toBe(2);
    expect(await sessions.consumeLoginToken("new".padEnd(64, "0"), T1)).toBeDefined();
    expect(await sessions.resumeSession("busy".padEnd(64, "0"), T2, T0)).toBeDefined();
  });
});
