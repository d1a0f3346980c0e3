import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createChatService } from "../../src/service.js";
import { cloneTestDatabase, databaseRows, databaseUrl, testDatabaseUrl, withAdmin } from "../support/postgres.js";

/*
 * The harness hands a test's database, once given back, to the next test of the process after resetting it
 * (test/support/postgres.ts): every PostgreSQL test relies on starting from its template's state, as a new clone would.
 */

const admin = testDatabaseUrl();
// A template of this file's own (named under the run's template, so the run's teardown drops it and its clones):
// the databases given back here are the only ones its queue holds.
const template = `${inject("pgSeeded").template}_own_${process.pid}`;

describe("PostgreSQL test databases given back", () => {
  let fresh: string[];

  beforeAll(async () => {
    await withAdmin(admin, (c) => c.query(`CREATE DATABASE "${template}" TEMPLATE "${inject("pgSeeded").template}"`));
    await withAdmin(admin, (c) => c.query(`CREATE DATABASE "${template}_fresh" TEMPLATE "${template}"`));
    fresh = await databaseRows(databaseUrl(admin, `${template}_fresh`));
  });
  afterAll(async () => {
    await withAdmin(admin, (c) => c.query(`DROP DATABASE IF EXISTS "${template}_fresh" WITH (FORCE)`));
  });

  it("come back to the next test exactly as their template: rows, sequences and all", async () => {
    const first = await cloneTestDatabase(admin, template);
    expect(await databaseRows(first.url)).toEqual(fresh);
    const { tenant } = inject("pgSeeded");
    const service = await createChatService({ database: first.url, env: {}, logLevel: "warn" });
    await service.orgs.create({ name: "Initech" });
    const { conversation_id } = await service.conversations.start(tenant.organization.id, tenant.chatbot.slug, { visitor_id: "v1" });
    await service.keys.disable(tenant.key.id);
    await service.close();
    expect((await databaseRows(first.url)).length).toBeGreaterThan(fresh.length);
    expect(conversation_id).toBeGreaterThan(0);
    await first.drop();

    const second = await cloneTestDatabase(admin, template);
    expect(second.url).toBe(first.url);
    expect(await databaseRows(second.url)).toEqual(fresh);
    await second.drop();
  });

  it("are reset and handed out again after a test ended every connection to them, the reset's own included", async () => {
    const first = await cloneTestDatabase(admin, template);
    await first.drop();
    const second = await cloneTestDatabase(admin, template);
    expect(second.url).toBe(first.url);
    const name = new URL(second.url).pathname.slice(1);
    const ended = await withAdmin(admin, async (c) => (await c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [name])).rowCount);
    expect(ended).toBeGreaterThan(0);
    await withAdmin(second.url, (c) => c.query("DELETE FROM chatbots"));
    await second.drop();

    const third = await cloneTestDatabase(admin, template);
    expect(third.url).toBe(first.url);
    expect(await databaseRows(third.url)).toEqual(fresh);
    await third.drop();
  });

  it("are not handed out again once a test changed their schema", async () => {
    const first = await cloneTestDatabase(admin, template);
    await withAdmin(first.url, (c) => c.query("ALTER TABLE chatbots ADD COLUMN left_behind integer"));
    await first.drop();

    const second = await cloneTestDatabase(admin, template);
    expect(second.url).not.toBe(first.url);
    expect(await databaseRows(second.url)).toEqual(fresh);
    const columns = await withAdmin(second.url, async (c) => (await c.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'chatbots'")).rows.map((r) => r.column_name));
    expect(columns).not.toContain("left_behind");
    await second.drop();
  });
});
