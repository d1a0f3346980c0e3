import pg from "pg";
import { internalsOf, type ChatService } from "../../src/service.js";
import type { SqliteStorage } from "../../src/storage/sqlite/index.js";
import type { PostgresStorage } from "../../src/storage/postgres/index.js";

/** SQL on a service's database, whichever engine, for tests that inspect what was stored. */
export interface TestSql {
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  /** A write with parameters. */
  run(sql: string, ...params: unknown[]): Promise<void>;
  exec(sql: string): Promise<void>;
}

/*
 * Rows come back shaped as SQLite gives them, so one expectation holds on both engines:
 * PostgreSQL's int8 (count(*), epoch milliseconds) as numbers, booleans as 0 and 1.
 */
const sqliteShaped: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => {
    if (oid === pg.types.builtins.INT8) return (v: string) => Number(v);
    if (oid === pg.types.builtins.BOOL) return (v: string) => (v === "t" ? 1 : 0);
    return pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig["getTypeParser"],
};

/**
 * @example
 * const rows = await sqlOf(service).all("SELECT status FROM webhook_deliveries WHERE webhook_id = ?", hookId);
 */
export function sqlOf(service: ChatService): TestSql {
  const { storage } = internalsOf(service);
  if (storage.engine === "sqlite") {
    const sqlite = (storage as SqliteStorage).sqlite;
    return {
      all: async (sql, ...params) => sqlite.prepare(sql).all(...params) as never,
      get: async (sql, ...params) => sqlite.prepare(sql).get(...params) as never,
      run: async (sql, ...params) => void sqlite.prepare(sql).run(...params),
      exec: async (sql) => void sqlite.exec(sql),
    };
  }
  const pool = (storage as PostgresStorage).db.$client;
  // SQLite's `?` placeholders become PostgreSQL's `$n`.
  const numbered = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  };
  const all = async (sql: string, ...params: unknown[]) => (await pool.query({ text: numbered(sql), values: params, types: sqliteShaped })).rows;
  return {
    all: all as TestSql["all"],
    get: (async (sql: string, ...params: unknown[]) => (await all(sql, ...params))[0]) as TestSql["get"],
    run: async (sql, ...params) => void (await all(sql, ...params)),
    exec: async (sql) => void (await pool.query(sql)),
  };
}
