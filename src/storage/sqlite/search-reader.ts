import Database from "better-sqlite3";
import type { ChangeFeed, KnowledgeReads } from "../../core/storage/index.js";
import { createDataVersion } from "./data-version.js";
import { createKnowledgeReads } from "./knowledge-reads.js";

/** Where a search thread finds the database: serializable, so a worker thread can be given it. */
export interface SqliteReaderSetup {
  file: string;
  /** The main connection's: a reader waits as long for a lock (WAL recovery) as a query there would. */
  busyTimeoutMs: number;
}

/**
 * A read-only connection of its own to an open service's database (already
 * migrated, in WAL mode), for searches in another thread: it sees the service's
 * commits as another process's, through the same change feed a process uses.
 *
 * @example
 * const reader = openSearchReader({ file: "./.chatsvc/chatsvc.db", busyTimeoutMs: 5000 });
 * await reader.reads.hasChunks(1);
 * reader.close();
 */
export function openSearchReader({ file, busyTimeoutMs }: SqliteReaderSetup): { reads: KnowledgeReads; changes: ChangeFeed; releaseMemory(): void; close(): void } {
  const sqlite = new Database(file, { readonly: true, fileMustExist: true });
  try {
    sqlite.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    sqlite.pragma("temp_store = MEMORY");
    const reads = createKnowledgeReads(sqlite);
    const dataVersion = createDataVersion(sqlite, file);
    return {
      reads,
      changes: { version: () => dataVersion.read() },
      releaseMemory: () => void (sqlite.open && sqlite.pragma("shrink_memory")),
      close() {
        dataVersion.close();
        if (sqlite.open) sqlite.close();
      },
    };
  } catch (error) {
    sqlite.close();
    throw error;
  }
}
