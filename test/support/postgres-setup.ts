import type { TestProject } from "vitest/node";
import type { BootstrapResult } from "../../src/bootstrap.js";
import { createChatService } from "../../src/service.js";
import { migratePostgres } from "../../src/storage/postgres/open.js";
import pg from "pg";
import { databaseUrl, testDatabaseUrl, withAdmin } from "./postgres.js";
import { HARNESS_TENANT, SEED_OPTIONS } from "./seed.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The migrated database every test database of this run is cloned from. */
    pgTemplate: string;
    /** The same database after the harness's first-run setup (see seed.ts), and what that setup returned. */
    pgSeeded: { template: string; tenant: BootstrapResult };
  }
}

/**
 * vitest global setup of the `postgres` project: one migrated template database
 * per run and a copy of it after the harness's first-run setup, named for the run so parallel runs on one server do not collide;
 * dropped with every clone left behind at the end.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const admin = testDatabaseUrl();
  const template = `chatsvc_test_${process.pid}`;
  // A worker the runner ended may have left its next clone's CREATE DATABASE running on the server, which would
  // make the clone after the drop (a run left a clone behind, most likely so): wait for such statements first.
  const dropAll = () =>
    withAdmin(admin, async (c) => {
      const deadline = Date.now() + 30_000;
      const creating = async () =>
        (await c.query("SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND starts_with(query, $1)", [`CREATE DATABASE "${template}_`])).rowCount! > 0;
      while (Date.now() < deadline && (await creating())) await new Promise((resolve) => setTimeout(resolve, 50));
      const { rows } = await c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2", [template, `${template}\\_%`]);
      for (const { datname } of rows) await c.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    });
  await dropAll();
  await withAdmin(admin, (c) => c.query(`CREATE DATABASE "${template}"`));
  const pool = new pg.Pool({ connectionString: databaseUrl(admin, template), max: 1 });
  try {
    await migratePostgres(pool);
  } finally {
    await pool.end();
  }
  project.provide("pgTemplate", template);
  const seeded = `${template}_seeded`;
  await withAdmin(admin, (c) => c.query(`CREATE DATABASE "${seeded}" TEMPLATE "${template}"`));
  const service = await createChatService({ ...SEED_OPTIONS, db: ":memory:", database: databaseUrl(admin, seeded) });
  try {
    project.provide("pgSeeded", { template: seeded, tenant: JSON.parse(JSON.stringify(await service.bootstrap(HARNESS_TENANT))) });
  } finally {
    await service.close();
  }
  return dropAll;
}
