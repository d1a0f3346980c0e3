import { join } from "node:path";
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { packageRoot } from "../../core/package-root.js";
import * as schema from "./schema.js";

export type PgDb = NodePgDatabase<typeof schema> & { $client: pg.Pool };

/**
 * Advisory lock key held while migrating: instances starting together queue on it,
 * the first applies the migrations and the others find nothing left to do.
 */
const MIGRATION_LOCK = 0x0c4a75c;

export interface OpenPostgresOptions {
  /** Connections kept by this instance. Default 10. */
  poolSize?: number;
  /** Apply pending migrations before returning. Default true. */
  migrate?: boolean;
}

/** True for a `postgres://` or `postgresql://` URL: how options and flags tell the engines apart. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/**
 * Opens a pool on a PostgreSQL database and applies pending migrations under an
 * advisory lock. The pool connects lazily, so a wrong URL shows on the first query:
 * migrating (the default) makes that the open itself.
 *
 * @example
 * const db = await openPostgres("postgres://chatsvc@db.internal/chatsvc");
 */
export async function openPostgres(url: string, { poolSize = 10, migrate: applyMigrations = true }: OpenPostgresOptions = {}): Promise<PgDb> {
  // Two connections stay open while the instance is quiet (the pool closes the others after 10 s idle): the first
  // chat turn after a pause would otherwise open connections and pay a new backend's first statements.
  const pool = new pg.Pool({ connectionString: url, max: poolSize, min: 2 });
  // An idle client losing its connection (server restart, failover) emits 'error' on the pool;
  // unhandled, that would end the process. The pool drops the client and the next query reconnects.
  pool.on("error", () => {});
  try {
    if (applyMigrations) await migratePostgres(pool);
    return drizzle({ client: pool, schema }) as PgDb;
  } catch (error) {
    await pool.end();
    throw error;
  }
}

/**
 * Applies pending migrations from `drizzle/postgres`, holding a session-level
 * advisory lock on one connection for the whole run. drizzle's migrator checks
 * what is applied before its transaction, so without the lock two instances
 * starting at once would both apply the same migration.
 *
 * @example
 * await migratePostgres(pool);
 */
export async function migratePostgres(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  let failed = false;
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      await migrate(drizzle({ client }), { migrationsFolder: join(packageRoot(), "drizzle", "postgres"), migrationsSchema: "drizzle" });
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
    }
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    // A connection that failed mid-migration may still hold the lock or an aborted transaction: discard it.
    client.release(failed);
  }
}
