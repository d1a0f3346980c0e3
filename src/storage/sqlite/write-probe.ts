import type { Sqlite } from "./open.js";

const PROBE_KEY = "health_probe";

/**
 * A write that proves the database can still take writes, for health checks:
 * one transaction that stores a page's worth of bytes in a `settings` row and
 * shrinks it again. Committing exercises the write path (lock, WAL, a read-only
 * or failing disk); the large value needs a free or new page, which a database
 * that cannot grow (full disk, `max_page_count`) has none of, while updating a
 * row in place would still succeed there. Throws SQLite's error when the write fails.
 *
 * @example
 * const probe = createWriteProbe(db.$client);
 * probe(); // throws SqliteError "database or disk is full" on a full database
 */
export function createWriteProbe(sqlite: Sqlite): () => void {
  const put = sqlite.prepare<[string, string]>(
    "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ','now')) " +
      "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
  );
  const pageSize = sqlite.pragma("page_size", { simple: true }) as number;
  const filler = "x".repeat(pageSize);
  return sqlite.transaction(() => {
    put.run(PROBE_KEY, filler);
    put.run(PROBE_KEY, new Date().toISOString());
  }).immediate;
}
