import type pg from "pg";

/** A pool (one statement, autocommit) or a client inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

/**
 * A named statement: node-postgres prepares it once per connection and then
 * sends only its name and values, so hot queries skip parsing and planning.
 */
export interface Statement {
  name: string;
  text: string;
  /** Planned for its values on every run instead of prepared once (see {@link plannedEachRun}). */
  unprepared?: boolean;
}

/**
 * @example
 * const byId = statement("orgs_by_id", "SELECT * FROM organizations WHERE id = $1");
 */
export function statement(name: string, text: string): Statement {
  return { name: `chatsvc_${name}`, text };
}

/**
 * A statement PostgreSQL plans for the values of each run. A prepared statement
 * switches to a generic plan after a few runs, one plan for every value: where the
 * best plan depends on the values (how many rows a chatbot holds, what a full-text
 * query matches), the generic plan can cost many times its planning.
 *
 * @example
 * const search = plannedEachRun("notes_search", "SELECT id FROM notes WHERE owner = $1 AND body @@ to_tsquery($2)");
 */
export function plannedEachRun(name: string, text: string): Statement {
  return { name: `chatsvc_${name}`, text, unprepared: true };
}

export async function all<T>(q: Queryable, s: Statement, values: unknown[] = []): Promise<T[]> {
  if (holdsNul(values)) return nothingHoldsNul(s);
  return (await q.query<T & pg.QueryResultRow>({ name: nameOf(s), text: s.text, values })).rows;
}

export async function one<T>(q: Queryable, s: Statement, values: unknown[] = []): Promise<T | undefined> {
  return (await all<T>(q, s, values))[0];
}

/** Rows changed by a write. */
export async function run(q: Queryable, s: Statement, values: unknown[] = []): Promise<number> {
  if (holdsNul(values)) return nothingHoldsNul(s).length;
  return (await q.query({ name: nameOf(s), text: s.text, values })).rowCount ?? 0;
}

// Without a name, node-postgres sends the statement unnamed: parsed and planned with its values.
const nameOf = (s: Statement) => (s.unprepared ? undefined : s.name);

/*
 * PostgreSQL text cannot hold U+0000 and refuses a parameter containing it, where
 * SQLite just finds no match. Input validation refuses NUL in what is stored, so a
 * NUL can only reach storage in a lookup (a slug, an e-mail from a URL): no stored
 * row can match it, and a read answers nothing instead of failing the request.
 */
const holdsNul = (values: unknown[]) => values.some((v) => typeof v === "string" && v.includes("\u0000"));

function nothingHoldsNul(s: Statement): never[] {
  if (/^\s*SELECT\b/i.test(s.text)) return [];
  throw new Error(`chatsvc: text with U+0000 reached a PostgreSQL write (${s.name}); validation should have refused it`);
}

/**
 * Runs `fn` in one transaction on one pooled connection: committed when it
 * resolves, rolled back when it throws (the error is rethrown).
 *
 * @example
 * await transaction(pool, async (tx) => { await run(tx, insertA, [1]); await run(tx, insertB, [2]); });
 */
export async function transaction<T>(pool: pg.Pool, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query("BEGIN");
    try {
      const result = await fn(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => (broken = true));
      throw error;
    }
  } catch (error) {
    broken ||= !isServerError(error);
    throw error;
  } finally {
    // A connection in an unknown state (lost mid-transaction) is discarded, not reused.
    client.release(broken);
  }
}

/** PostgreSQL's SQLSTATE of a failed statement, e.g. `23505` for a unique violation. */
export function sqlState(error: unknown): string | undefined {
  return isServerError(error) ? (error as { code: string }).code : undefined;
}

function isServerError(error: unknown): boolean {
  return typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string" && /^[0-9A-Z]{5}$/.test((error as { code: string }).code);
}

/** Unique violation on the named constraint or index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  return sqlState(error) === "23505" && (constraint === undefined || (error as { constraint?: string }).constraint === constraint);
}
