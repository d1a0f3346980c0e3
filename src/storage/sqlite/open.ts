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

/** Four times the log SQLite's default checkpoints keep, so ordinary writes never pay for the cut. */
const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;

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
    // A bulk ingestion grows the log far past its usual size (its checkpoints then run in a worker:
    // wal-checkpoints.ts). SQLite reuses a log file at its largest; this cuts it back each time the log
    // starts over, so the disk it holds (and the old page images in it) does not outlive the ingestion.
    client.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    // No memory map (SQLite's default): every mapped page a query touched, and the neighbours the kernel
    // maps with it, stayed in the process's RSS, so a busy server soon showed the whole file as its own
    // memory. Retrieval reads a few dozen rows per question now (the vector scan is in memory): through
    // SQLite's page cache they cost a little more time than through the map, for a fraction of the memory.
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

