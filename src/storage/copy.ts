import { existsSync } from "node:fs";
import { getTableColumns, getTableName } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import type pg from "pg";
import { ChatsvcError } from "../core/errors.js";
import { transaction } from "./postgres/client.js";
import { openPostgres } from "./postgres/open.js";
import * as pgSchema from "./postgres/schema.js";
import { migrateLegacyVectors } from "./sqlite/knowledge.js";
import { openDatabase, type Sqlite } from "./sqlite/open.js";

/**
 * What moves, parents before children so foreign keys hold row by row. Both
 * schemas name every column alike; SQLite's FTS index and vector revision
 * counters are rebuilt by PostgreSQL itself (generated tsvector, triggers).
 */
export const COPIED_TABLES: PgTable[] = [
  pgSchema.organizations,
  pgSchema.users,
  pgSchema.apiKeys,
  pgSchema.chatbots,
  pgSchema.conversations,
  pgSchema.messages,
  pgSchema.leads,
  pgSchema.sourceCitations,
  pgSchema.corrections,
  pgSchema.creditLedger,
  pgSchema.webhooks,
  pgSchema.webhookDeliveries,
  pgSchema.documents,
  pgSchema.webSitemaps,
  pgSchema.chunks,
  pgSchema.chunkEmbeddings,
  pgSchema.settings,
  pgSchema.widgetBudgets,
  pgSchema.widgetBudgetCounters,
  pgSchema.idempotencyKeys,
  pgSchema.consoleLoginTokens,
  pgSchema.consoleSessions,
  pgSchema.auditLog,
];

/**
 * What starts empty: runtime state of running instances (change counters and
 * rate-limit buckets exist on PostgreSQL only; a job lease held by a stopped
 * SQLite server would only delay that job on the new database), and derived
 * data the target rebuilds itself: `analytics_daily`'s triggers count the
 * conversations, messages and leads as the copy inserts them (copying the
 * counters too would count everything twice), and `unanswered_questions`'
 * triggers add the rows of the copied replies (keyed by the first report).
 */
export const NOT_COPIED_TABLES: PgTable[] = [pgSchema.revisions, pgSchema.rateBuckets, pgSchema.leases, pgSchema.analyticsDaily, pgSchema.unansweredQuestions];

/** PostgreSQL accepts at most 65,535 parameters per statement. */
const MAX_PARAMETERS = 65_535;
const MAX_BATCH_ROWS = 500;

export interface CopiedTable {
  table: string;
  rows: number;
}

export interface CopyResult {
  tables: CopiedTable[];
  total: number;
}

/**
 * Copies every row of a SQLite database into an empty PostgreSQL database,
 * keeping ids: migrates the target, refuses one that holds any row, inserts
 * in batches inside one PostgreSQL transaction, checks each table's count
 * against the source and moves the id sequences past the copied ids. The
 * source is read from one snapshot, so a process still writing to it cannot
 * tear the copy; its later writes are simply not copied.
 *
 * @example
 * const { tables } = await copySqliteToPostgres("./.chatsvc/chatsvc.db", "postgres://chatsvc@db/chatsvc");
 */
export async function copySqliteToPostgres(file: string, url: string): Promise<CopyResult> {
  if (!existsSync(file)) throw new ChatsvcError(404, `SQLite database ${file} does not exist`);
  const sqlite = openDatabase(file).$client;
  try {
    // Opening the service would have moved an old install's vectors into `chunk_embeddings`; the copy reads them there.
    migrateLegacyVectors(sqlite);
    const db = await openPostgres(url, { poolSize: 1 });
    try {
      sqlite.exec("BEGIN");
      try {
        return await transaction(db.$client, async (tx) => {
          await refuseNonEmpty(tx);
          const tables: CopiedTable[] = [];
          for (const table of COPIED_TABLES) tables.push(await copyTable(sqlite, tx, table));
          return { tables, total: tables.reduce((sum, t) => sum + t.rows, 0) };
        });
      } finally {
        sqlite.exec("COMMIT");
      }
    } finally {
      await db.$client.end();
    }
  } finally {
    sqlite.close();
  }
}

async function refuseNonEmpty(tx: pg.PoolClient): Promise<void> {
  const filled: string[] = [];
  for (const table of COPIED_TABLES) {
    const name = getTableName(table);
    const { rows } = await tx.query<{ filled: boolean }>(`SELECT EXISTS (SELECT 1 FROM "${name}") AS filled`);
    if (rows[0]!.filled) filled.push(name);
  }
  if (filled.length > 0) {
    throw new ChatsvcError(409, `The PostgreSQL database is not empty (rows in ${filled.join(", ")}): db copy only fills a new, empty database`);
  }
}

async function copyTable(sqlite: Sqlite, tx: pg.PoolClient, table: PgTable): Promise<CopiedTable> {
  const name = getTableName(table);
  const columns = Object.values(getTableColumns(table));
  // SQLite keeps booleans as 0/1; PostgreSQL wants true/false.
  const booleans = columns.map((c) => c.columnType === "PgBoolean");
  const list = columns.map((c) => `"${c.name}"`).join(", ");
  const batchRows = Math.min(MAX_BATCH_ROWS, Math.floor(MAX_PARAMETERS / columns.length));

  let copied = 0;
  let batch: unknown[][] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const values: unknown[] = [];
    const tuples = batch.map((row) => `(${row.map((v) => (values.push(v), `$${values.length}`)).join(", ")})`);
    await tx.query(`INSERT INTO "${name}" (${list}) VALUES ${tuples.join(", ")}`, values);
    copied += batch.length;
    batch = [];
  };
  for (const row of sqlite.prepare<[], unknown[]>(`SELECT ${list} FROM "${name}" ORDER BY rowid`).raw().iterate()) {
    batch.push(row.map((v, i) => (booleans[i] && v !== null ? v !== 0 : v)));
    if (batch.length === batchRows) await flush();
  }
  await flush();

  const source = sqlite.prepare<[], number>(`SELECT count(*) FROM "${name}"`).pluck().get()!;
  const { rows } = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}"`);
  if (source !== copied || rows[0]!.n !== source) {
    throw new Error(`db copy: ${name} has ${source} rows in SQLite but ${rows[0]!.n} in PostgreSQL; nothing was copied`);
  }
  if ("id" in getTableColumns(table)) {
    // Copied rows keep their ids; new rows must start after them, not at 1.
    await tx.query(`SELECT setval(pg_get_serial_sequence('"${name}"', 'id'), max(id)) FROM "${name}" HAVING max(id) IS NOT NULL`);
  }
  return { table: name, rows: copied };
}
