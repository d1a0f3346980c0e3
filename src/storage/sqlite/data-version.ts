import { closeSync, openSync, readSync } from "node:fs";
import type { Sqlite } from "./open.js";

/** The first copy of the WAL-index header: every field a commit changes (https://sqlite.org/walformat.html). */
const HEADER_BYTES = 48;

export interface DataVersion {
  /** `PRAGMA data_version`: moves when another connection (the CLI in another process) commits; this connection's own commits do not move it. */
  read(): number;
  close(): void;
}

/**
 * `PRAGMA data_version`, exact on every call, without its cost when nothing
 * was committed since the last call. The pragma opens and ends a read
 * transaction (file-lock system calls) each time; reading the WAL-index
 * header from the `-shm` file is one `pread`. Every commit, by any
 * connection of any process, rewrites that header before its transaction
 * ends (a new last frame, or a new salt when the log restarts), so a header
 * equal to the one read before the last pragma proves that no commit
 * happened since, and the pragma's answer stands. A header that differs
 * (a commit, a checkpoint, a torn read while a writer updates it) only
 * sends the call to the pragma, which decides. The header is read before
 * the pragma: a commit between the two then changes the next header read.
 * Processes of every SQLite version share that header through the same
 * file, so its layout is fixed. Without a `-shm` file (not WAL, in memory)
 * every call runs the pragma.
 *
 * @example
 * const version = createDataVersion(sqlite, "./.chatsvc/chatsvc.db");
 * version.read(); // 7
 */
export function createDataVersion(sqlite: Sqlite, file: string): DataVersion {
  const pragma = sqlite.prepare<[], number>("PRAGMA data_version").pluck();
  let fd: number | undefined;
  try {
    if (sqlite.pragma("journal_mode", { simple: true }) === "wal") fd = openSync(`${file}-shm`, "r");
  } catch {
    fd = undefined;
  }
  let seen = Buffer.alloc(HEADER_BYTES);
  let next = Buffer.alloc(HEADER_BYTES);
  let known = false;
  let version = 0;
  return {
    read() {
      if (fd === undefined) return pragma.get()!;
      const complete = readSync(fd, next, 0, HEADER_BYTES, 0) === HEADER_BYTES;
      if (known && complete && next.equals(seen)) return version;
      version = pragma.get()!;
      [seen, next] = [next, seen];
      known = complete;
      return version;
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
