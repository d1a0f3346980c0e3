import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";
import { cloneTestDatabase, databaseRows, testDatabaseUrl } from "./postgres.js";

/** The engine this test project runs on: `postgres` in the postgres project, else `sqlite`. */
export const testEngine: "sqlite" | "postgres" = process.env.CHATSVC_TEST_ENGINE === "postgres" ? "postgres" : "sqlite";

export interface TestDatabase {
  /** What to hand `createChatService` (and the CLI) to open it. */
  options: { db: string; database?: string; databasePoolSize?: number };
  /** `--db` or `--database-url` with its value, for CLI runs. */
  cliArgs: string[];
  /** Drops a PostgreSQL database; a SQLite file goes with its temp dir. */
  drop(): Promise<void>;
}

/**
 * A fresh database for one service: a SQLite file in `dir`, or in the `postgres`
 * project a new PostgreSQL database cloned from the run's migrated template
 * (`seeded`: the template after the harness's first-run setup, see seed.ts).
 *
 * @example
 * const database = await testDatabase(dir);
 * const service = await createChatService({ ...database.options });
 */
export async function testDatabase(dir: string, file = "chatsvc.db", { seeded = false } = {}): Promise<TestDatabase> {
  const db = join(dir, file);
  if (testEngine === "sqlite") return { options: { db }, cliArgs: ["--db", db], drop: async () => {} };
  const clone = await cloneTestDatabase(testDatabaseUrl(), seeded ? inject("pgSeeded").template : inject("pgTemplate"));
  // Services opened with `env: {}` (as harnesses are) do not read the project's CHATSVC_DATABASE_POOL_SIZE themselves.
  const poolSize = Number(process.env.CHATSVC_DATABASE_POOL_SIZE) || undefined;
  return { options: { db, database: clone.url, databasePoolSize: poolSize }, cliArgs: ["--database-url", clone.url], drop: clone.drop };
}

/**
 * Everything the database holds as bytes, for tests asserting what is never stored:
 * the SQLite file with its WAL, or every row of every table on PostgreSQL as text.
 */
export async function databaseContents(database: TestDatabase): Promise<Buffer> {
  if (!database.options.database) {
    const read = (file: string) => (existsSync(file) ? readFileSync(file) : Buffer.alloc(0));
    return Buffer.concat([read(database.options.db), read(`${database.options.db}-wal`)]);
  }
  return Buffer.from((await databaseRows(database.options.database)).join("\n"));
}
