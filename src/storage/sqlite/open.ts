import { join } from "node:path";
import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import * as sqliteVec from "sqlite-vec";
import { packageRoot } from "../../core/package-root.js";
import { createPrivateDatabaseFile } from "./file-permissions.js";
import * as schema from "./schema.js";

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };
export type Sqlite = Database.Database;

export interface OpenDatabaseOptions {
  /** Milliseconds a writer waits for another connection's lock before `SQLITE_BUSY`. */
  busyTimeoutMs?: number;
}

/** Most of the file SQLite maps into memory, in bytes. */
export const MMAP_SIZE = 1_073_741_824;

/**
 * Opens (creating if needed, private to its owner) the SQLite file, sets the
 * pragmas every connection needs, and applies pending migrations.
 *
 * @example
 * const db = openDatabase("./.chatsvc/chatsvc.db");
 */
export function openDatabase(file: string, { busyTimeoutMs = 5_000 }: OpenDatabaseOptions = {}): Db {
  createPrivateDatabaseFile(file);
  const client = new Database(file);
  try {
    client.pragma("journal_mode = WAL");
    // NORMAL is only durable-enough in WAL mode and must be set on every connection.
    client.pragma("synchronous = NORMAL");
    client.pragma("foreign_keys = ON");
    client.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    client.pragma("temp_store = MEMORY");
    // Deleted and overwritten rows are zeroed where that costs no extra I/O (their page is written anyway),
    // so an erased visitor's text does not linger in the file's free space. Erasure turns on the full mode.
    client.pragma("secure_delete = FAST");
    // Retrieval reads FTS5 posting lists, chunk rows and float vectors for re-scoring: mapping the file
    // saves a copy per page, which made retrieval measurably faster (bench scenario 2). The pages it touches
    // show in RSS as file-backed memory; a quiet server unmaps them (`releaseMemory` in index.ts).
    client.pragma(`mmap_size = ${MMAP_SIZE}`);
    // Only databases from before chunk_embeddings hold a vec0 table, which cannot even be read or dropped
    // without the extension; every other open skips loading it.
    if (client.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chunk_vectors'").get()) sqliteVec.load(client);
    const db = drizzle({ client, schema }) as Db;
    migrate(db, { migrationsFolder: join(packageRoot(), "drizzle", "sqlite") });
    return db;
  } catch (error) {
    client.close();
    throw error;
  }
}

