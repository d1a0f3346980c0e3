import { afterEach, describe, expect, inject, it } from "vitest";
import { createChatService, internalsOf } from "../../src/service.js";
import { seedTenant } from "../support/storage-seed.js";
import { cloneTestDatabase, RESET_APPLICATION, testDatabaseUrl, withAdmin } from "../support/postgres.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connectionsTo(url: string): Promise<number> {
  const name = new URL(url).pathname.slice(1);
  return withAdmin(
    testDatabaseUrl(),
    async (c) =>
      (await c.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name <> $2", [name, RESET_APPLICATION])).rows[0]!.n,
  );
}

describe("the PostgreSQL pool of an instance", () => {
  it("holds at most databasePoolSize connections (plus its listener) however many requests run at once", async () => {
    const db = await cloneTestDatabase(testDatabaseUrl(), inject("pgTemplate"));
    cleanups.push(db.drop);
    const service = await createChatService({ database: db.url, databasePoolSize: 2, env: {} });
    cleanups.push(() => service.close());
    const { storage } = internalsOf(service);
    const { bot } = await seedTenant(storage);
    let most = 0;
    const sampling = (async () => {
      for (let i = 0; i < 20; i++) {
        most = Math.max(most, await connectionsTo(db.url));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const started = await Promise.all(Array.from({ length: 40 }, (_, i) => service.conversations.start(bot.organization_id, bot.slug, { visitor_id: `v${i}` })));
    await sampling;
    expect(new Set(started.map((s) => s.conversation_id)).size).toBe(40);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(3);
  });

  it("refuses a pool of fewer than 2 connections with a message naming the setting", async () => {
    for (const options of [{ databasePoolSize: 1 }, { env: { CHATSVC_DATABASE_POOL_SIZE: "ten" } }]) {
      const error = await createChatService({ database: testDatabaseUrl(), env: {}, ...options }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ status: 422, errors: { databasePoolSize: ["databasePoolSize must be an integer of at least 2"] } });
    }
  });
});
