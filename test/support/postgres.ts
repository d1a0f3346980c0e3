import pg from "pg";

/** Where tests find PostgreSQL unless `CHATSVC_TEST_DATABASE_URL` says otherwise: CI's server (trust authentication). */
export const DEFAULT_TEST_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test";

/** The URL of the server tests use: `CHATSVC_TEST_DATABASE_URL`, else {@link DEFAULT_TEST_DATABASE_URL}. */
export function testDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.CHATSVC_TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL;
}

/** The same server's database named `name`. */
export function databaseUrl(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Why the server does not answer, or undefined when it does (one query, a few seconds at most). */
export async function unreachable(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message || error.constructor.name : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Runs `fn` on a connection to the admin URL (the server's `test` database), for CREATE and DROP DATABASE. */
export async function withAdmin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

let counter = 0;
/** The next clone, made while the current test runs: CREATE DATABASE copies every table and is most of a test's setup. */
const prefetched = new Map<string, Promise<string>>();
/** Databases tests gave back, being reset to their template's rows, for the next test of this process (see recycle()). */
const recycled = new Map<string, Promise<string | undefined>[]>();
/** Each template's schema and rows, read from its first clone in this process, before any test touched it. */
const snapshots = new Map<string, Promise<Snapshot>>();

interface Snapshot {
  schema: string;
  tables: { name: string; columns: string; rows: string | null }[];
  sequences: { name: string; value: string; called: boolean }[];
}

function createClone(adminUrl: string, template: string): Promise<string> {
  const name = `${template}_${process.pid}_${++counter}`;
  const made = withAdmin(adminUrl, (c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`)).then(() => name);
  made.catch(() => {}); // a prefetch nobody takes must not fail the run; a taken one rethrows below
  return made;
}

/**
 * Everything about a database's schema a test could change and a reset would not put back: tables, columns,
 * indexes, constraints, triggers (and whether they are enabled), functions, sequences' settings, the database's settings,
 * and the full-text column's statistics.
 */
const SCHEMA = `
  SELECT md5(string_agg(line, E'\n' ORDER BY line)) AS schema FROM (
    SELECT format('%s %s.%s %s', c.relkind, n.nspname, c.relname, c.relpersistence) AS line
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
    UNION ALL SELECT format('column %s.%s %s %s %s %s', a.attrelid::regclass, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attgenerated, pg_get_expr(d.adbin, d.adrelid))
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attnum > 0 AND NOT a.attisdropped AND n.nspname IN ('public', 'drizzle')
    UNION ALL SELECT indexdef FROM pg_indexes WHERE schemaname IN ('public', 'drizzle')
    UNION ALL SELECT format('constraint %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid)) FROM pg_constraint WHERE connamespace IN ('public'::regnamespace, 'drizzle'::regnamespace)
    UNION ALL SELECT format('trigger %s %s %s', tgenabled, tgname, pg_get_triggerdef(oid)) FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL SELECT format('function %s %s', oid::regprocedure, md5(prosrc)) FROM pg_proc WHERE pronamespace IN ('public'::regnamespace, 'drizzle'::regnamespace)
    UNION ALL SELECT format('sequence %s %s %s %s %s', seqrelid::regclass, seqstart, seqincrement, seqmax, seqcycle) FROM pg_sequence
    UNION ALL SELECT format('setting %s', setconfig) FROM pg_db_role_setting WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
    UNION ALL SELECT format('extension %s %s', extname, extversion) FROM pg_extension
    -- The product reads the full-text column's statistics (word frequencies): rows put back do not undo an ANALYZE.
    UNION ALL SELECT format('statistics %s', md5(most_common_elems::text)) FROM pg_stats WHERE schemaname = 'public' AND tablename = 'chunks' AND attname = 'search'
  ) lines`;

async function readSnapshot(url: string): Promise<Snapshot> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows: [{ schema }] } = await client.query<{ schema: string }>(SCHEMA);
    const { rows: tables } = await client.query<{ name: string; columns: string }>(`
      SELECT format('%I.%I', n.nspname, c.relname) AS name,
             string_agg(format('%I', a.attname), ', ' ORDER BY a.attnum) FILTER (WHERE a.attgenerated = '') AS columns
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       WHERE c.relkind IN ('r', 'p') AND n.nspname IN ('public', 'drizzle') GROUP BY 1 ORDER BY 1`);
    const withRows = await Promise.all(tables.map(async (t) => ({ ...t, rows: (await client.query<{ rows: string | null }>(`SELECT json_agg(t)::text AS rows FROM ${t.name} t`)).rows[0]!.rows })));
    const { rows: names } = await client.query<{ name: string }>("SELECT seqrelid::regclass::text AS name FROM pg_sequence");
    const sequences = await Promise.all(names.map(async ({ name }) => ({ name, ...(await client.query<{ value: string; called: boolean }>(`SELECT last_value::text AS value, is_called AS called FROM ${name}`)).rows[0]! })));
    return { schema, tables: withRows, sequences };
  } finally {
    await client.end().catch(() => {});
  }
}

/** Every row of every table (schemas `public` and `drizzle`) and every sequence's position, as text, in a stable order. */
export function databaseRows(url: string): Promise<string[]> {
  return withAdmin(url, async (client) => {
    const { rows: tables } = await client.query<{ name: string }>(
      "SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname IN ('public', 'drizzle') ORDER BY 1",
    );
    const { rows: sequences } = await client.query<{ name: string }>("SELECT seqrelid::regclass::text AS name FROM pg_sequence ORDER BY 1");
    const lines: string[] = [];
    for (const { name } of tables) lines.push(...(await client.query<{ row: string }>(`SELECT format('%s %s', '${name}', t::text) AS row FROM ${name} t ORDER BY 1`)).rows.map((r) => r.row));
    for (const { name } of sequences) lines.push(...(await client.query<{ row: string }>(`SELECT format('%s %s %s', '${name}', last_value, is_called) AS row FROM ${name}`)).rows.map((r) => r.row));
    return lines;
  });
}

/** How the connections kept for resets name themselves (tests that count a database's connections leave them out). */
export const RESET_APPLICATION = "chatsvc-test-reset";

/**
 * A connection to each database given back, kept for its next reset: opening one, and its first look at the
 * catalogs, cost more than the reset's own work. A test that ended it (or the run's teardown, dropping the
 * database) makes the next reset open another.
 */
const resetConnections = new Map<string, Promise<pg.Client>>();

function resetConnection(adminUrl: string, name: string): Promise<pg.Client> {
  let kept = resetConnections.get(name);
  if (!kept) {
    const client = new pg.Client({ connectionString: databaseUrl(adminUrl, name), application_name: RESET_APPLICATION });
    const forget = () => {
      if (resetConnections.get(name) === kept) resetConnections.delete(name);
    };
    client.on("error", forget);
    client.on("end", forget);
    kept = client.connect().then(() => client);
    kept.catch(forget);
    resetConnections.set(name, kept);
  }
  return kept;
}

function closeResetConnection(name: string): Promise<void> {
  const kept = resetConnections.get(name);
  resetConnections.delete(name);
  return kept?.then((client) => client.end()).catch(() => {}) ?? Promise.resolve();
}

/**
 * Puts a database a test gave back into its template's state, for the next test: ends its connections,
 * checks that its schema is the template's, empties every table and writes the template's rows and sequence
 * positions back. CREATE and DROP DATABASE (which on PostgreSQL 15 forces a checkpoint of the whole server)
 * were most of a PostgreSQL test's CPU. Settles with the name, or undefined when the database cannot be
 * reset (a test changed its schema, or the user may not replay rows past their triggers): then it is dropped.
 */
async function recycle(adminUrl: string, name: string, snapshot: Promise<Snapshot>): Promise<string | undefined> {
  try {
    const template = await snapshot;
    const client = await resetConnection(adminUrl, name);
    await client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
    const { rows: [{ schema }] } = await client.query<{ schema: string }>(SCHEMA);
    if (schema !== template.schema) throw new Error(`${name}: a test changed its schema or its full-text statistics`);
    // One script, one round trip. Rows go back as they were, past foreign keys and triggers (which would move
    // change counters); DELETE, not TRUNCATE, which makes new files for every table and index.
    const script = [
      "BEGIN",
      "SET LOCAL session_replication_role = replica",
      ...template.tables.map((t) => `DELETE FROM ${t.name}`),
      ...template.tables.flatMap((t) =>
        t.rows ? [`INSERT INTO ${t.name} (${t.columns}) OVERRIDING SYSTEM VALUE SELECT ${t.columns} FROM json_populate_recordset(NULL::${t.name}, ${client.escapeLiteral(t.rows)})`] : [],
      ),
      ...template.sequences.map((q) => `SELECT setval(${client.escapeLiteral(q.name)}::regclass, ${Number(q.value)}, ${q.called})`),
      "COMMIT",
    ];
    await client.query(script.join(";\n"));
    return name;
  } catch {
    await closeResetConnection(name);
    void dropDatabase(adminUrl, name);
    return undefined;
  }
}

function dropDatabase(adminUrl: string, name: string): Promise<void> {
  return withAdmin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(
    () => {},
    () => {},
  );
}

/**
 * A fresh database in its template's state (see postgres-setup.ts): its URL and a function that gives it back.
 * It is one a test of this process gave back and that was reset (see recycle()), or a new clone: cloning copies
 * files, much faster than migrating, and the next clone is already being made when this one is handed out.
 * Giving back does not wait for the server (the run's teardown drops whatever is left).
 *
 * @example
 * const { url, drop } = await cloneTestDatabase(template);
 */
export async function cloneTestDatabase(adminUrl: string, template: string): Promise<{ url: string; drop(): Promise<void> }> {
  const key = `${adminUrl} ${template}`;
  const name = (await takeRecycled(key)) ?? (await takeClone(adminUrl, template, key));
  let givenBack = false;
  return {
    url: databaseUrl(adminUrl, name),
    drop: async () => {
      // Given back twice, it would go to two tests.
      if (givenBack) return;
      givenBack = true;
      const snapshot = snapshots.get(key)!;
      const queue = recycled.get(key) ?? [];
      recycled.set(key, queue);
      queue.push(recycle(adminUrl, name, snapshot));
    },
  };
}

async function takeRecycled(key: string): Promise<string | undefined> {
  const queue = recycled.get(key);
  while (queue?.length) {
    const name = await queue.shift();
    if (name) return name;
  }
  return undefined;
}

async function takeClone(adminUrl: string, template: string, key: string): Promise<string> {
  const taken = prefetched.get(key) ?? createClone(adminUrl, template);
  prefetched.set(key, createClone(adminUrl, template));
  const name = await taken;
  // Read before the first test writes to it: every later reset goes back to this.
  if (!snapshots.has(key)) snapshots.set(key, readSnapshot(databaseUrl(adminUrl, name)));
  // Without a snapshot (the user may not read some table), recycle() drops databases instead of resetting them.
  await snapshots.get(key)!.catch(() => {});
  return name;
}
