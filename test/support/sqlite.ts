import type { Database } from "better-sqlite3";
import { internalsOf, type ChatService } from "../../src/service.js";
import type { SqliteStorage } from "../../src/storage/sqlite/index.js";

/** The SQLite connection under a service, for tests that inspect or damage the file directly. */
export function sqliteOf(service: ChatService): Database {
  const { storage } = internalsOf(service);
  if (storage.engine !== "sqlite") throw new Error("this test needs the SQLite engine");
  return (storage as SqliteStorage).sqlite;
}
