import Database from "better-sqlite3";
import type { ChangeFeed, KnowledgeReads } from "../../core/storage/index.js";
import { createKnowledgeReads } from "./knowledge-reads.js";

/** Where a search thread finds the database: serializable, so a worker thread can be given it. */
export interface SqliteReaderSetup {
  file: string;
  /** The main connection's: a reader waits as long for a lock (WAL recovery) as a query there would. */
  busyTimeoutMs: number;
}

/**
 * How long searches may read from one snapshot. While it is held, checkpoints cannot copy the log
 * past it, and a truncating one (erasure's) waits for it to end.
 */
const SNAPSHOT_MS = 250;

/**
 * A read-only connection of its own to an open service's database (already
 * migrated, in WAL mode), for searches in another thread: it sees the service's
 * commits as another process's.
 *
 * Searches read from one snapshot (a read transaction held open, see `fresh`)
 * for as long as nothing they read was written since and for {@link SNAPSHOT_MS}
 * at most: SQLite drops a connection's whole page cache when it starts a read
 * after another connection committed, and under load the service commits a
 * turn between nearly every two searches, to tables no search reads. Whether
 * what searches read changed is the `knowledge_version` counter that every
 * such write moves (migration 0024), read on a second connection, whose page
 * cache holds that table's two pages.
 *
 * @example
 * const reader = openSearchReader({ file: "./.chatsvc/chatsvc.db", busyTimeoutMs: 5000 });
 * reader.fresh();
 * await reader.reads.hasChunks(1);
 * reader.close();
 */
export function openSearchReader({ file, busyTimeoutMs }: SqliteReaderSetup): { reads: KnowledgeReads; changes: ChangeFeed; fresh(): void; releaseMemory(): void; close(): void } {
  const busyTimeout = `busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`;
  const sqlite = new Database(file, { readonly: true, fileMustExist: true });
  let probe: Database.Database | undefined;
  try {
    sqlite.pragma(busyTimeout);
    sqlite.pragma("temp_store = MEMORY");
    probe = new Database(file, { readonly: true, fileMustExist: true });
    probe.pragma(busyTimeout);
    const versionSql = "SELECT version FROM knowledge_version";
    const versionHeld = sqlite.prepare<[], number>(versionSql).pluck();
    const versionNow = probe.prepare<[], number>(versionSql).pluck();
    const reads = createKnowledgeReads(sqlite);
    let held: { version: number; since: number } | undefined;
    const end = () => {
      if (sqlite.inTransaction) sqlite.exec("COMMIT");
      held = undefined;
    };
    // Ends a snapshot that no search follows within its time, so a quiet server holds back no checkpoint.
    const quiet = setTimeout(end, SNAPSHOT_MS);
    quiet.unref();
    return {
      reads,
      // Every write a search reads moves the counter, the embedder record's included: the snapshot's version is the
      // change feed (read again only once the snapshot ended, when a search's reads run on their own).
      changes: { version: () => held?.version ?? versionNow.get()! },
      /** Before a search: the snapshot held, when it is young and nothing searches read was written since; else a new one. */
      fresh() {
        const now = performance.now();
        quiet.refresh();
        if (held && now - held.since < SNAPSHOT_MS && versionNow.get() === held.version) return;
        end();
        sqlite.exec("BEGIN");
        // The first read takes the snapshot, and tells which version it holds.
        held = { version: versionHeld.get()!, since: now };
      },
      releaseMemory() {
        end();
        if (sqlite.open) sqlite.pragma("shrink_memory");
      },
      close() {
        clearTimeout(quiet);
        probe?.close();
        if (sqlite.open) sqlite.close();
      },
    };
  } catch (error) {
    probe?.close();
    sqlite.close();
    throw error;
  }
}
