import { closeSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { ExposedFile } from "../../core/storage/index.js";

/** Permission bits that let group or others read, write or enter. */
const SHARED_BITS = 0o077;


/** True for the names SQLite opens without a file of their own (in-memory, temporary). */
function isInMemory(file: string): boolean {
  return file === "" || file === ":memory:";
}

/** The files one SQLite database in WAL mode consists of. */
function databaseFiles(file: string): string[] {
  return [file, `${file}-wal`, `${file}-shm`];
}

/**
 * Creates the database's folder (0700) and an empty database file (0600) when
 * they do not exist yet; existing ones are left as they are. The file holds
 * webhook secrets, the widget signing secret, leads and transcripts, and
 * SQLite's unix VFS creates `-wal` and `-shm` with the main file's permissions,
 * so creating it before SQLite does keeps all three private.
 *
 * @example
 * createPrivateDatabaseFile("./.chatsvc/chatsvc.db");
 */
export function createPrivateDatabaseFile(file: string): void {
  if (isInMemory(file)) return;
  mkdirSync(dirname(resolve(file)), { recursive: true, mode: 0o700 });
  try {
    // SQLite reads an empty file as an empty database.
    closeSync(openSync(file, "wx", 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

/**
 * The database's existing files that group or others may read or write, for
 * `serve` to warn about; nothing on Windows, whose modes say nothing of access.
 *
 * @example
 * exposedDatabaseFiles("./.chatsvc/chatsvc.db") // [{ path: "./.chatsvc/chatsvc.db", mode: "0644" }, ...]
 */
export function exposedDatabaseFiles(file: string): ExposedFile[] {
  if (isInMemory(file) || process.platform === "win32") return [];
  const exposed: ExposedFile[] = [];
  for (const path of databaseFiles(file)) {
    let mode: number;
    try {
      mode = statSync(path).mode & 0o777;
    } catch {
      continue;
    }
    if ((mode & SHARED_BITS) !== 0) exposed.push({ path, mode: mode.toString(8).padStart(4, "0") });
  }
  return exposed;
}
