import pg from "pg";

/**
 * The PostgreSQL server the bench uses beside SQLite: CHATSVC_BENCH_PG_URL, or the
 * local trust-auth server CI and development machines run. The bench only creates
 * and drops databases named `bench_*` there.
 */
export const PG_SERVER_URL = process.env.CHATSVC_BENCH_PG_URL || "postgres://postgres@127.0.0.1:5432/postgres";

/** The URL of database `name` on the bench's server. */
export function databaseUrl(name) {
  const url = new URL(PG_SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withAdmin(fn, url = PG_SERVER_URL) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const checked = (name) => {
  if (!/^bench_[a-z0-9_]+$/.test(name)) throw new Error(`bench databases are named bench_*: ${name}`);
  return `"${name}"`;
};

/** Why PostgreSQL cannot be used, or null when it answers (memoised: one probe per run). */
let probe;
export function postgresUnavailable() {
  probe ??= withAdmin((c) => c.query("SELECT 1")).then(
    () => null,
    (error) => `no PostgreSQL answers at ${new URL(PG_SERVER_URL).host} (${error.code ?? error.message}); set CHATSVC_BENCH_PG_URL`,
  );
  return probe;
}

/** Names of the bench databases starting with `prefix`. */
export async function listDatabases(prefix) {
  return withAdmin(async (c) => (await c.query("SELECT datname FROM pg_database WHERE datname LIKE $1", [`${prefix.replace(/_/g, "\\_")}%`])).rows.map((r) => r.datname));
}

/** Creates database `name` (empty, or a copy of `template`), dropping a leftover of that name first. */
export async function createDatabase(name, template) {
  await dropDatabase(name);
  await withAdmin((c) => c.query(`CREATE DATABASE ${checked(name)}${template ? ` TEMPLATE ${checked(template)}` : ""}`));
  return databaseUrl(name);
}

export async function renameDatabase(from, to) {
  await withAdmin((c) => c.query(`ALTER DATABASE ${checked(from)} RENAME TO ${checked(to)}`));
}

export async function dropDatabase(name) {
  await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${checked(name)} WITH (FORCE)`));
}

/**
 * Gathers planner statistics of database `name`, as autovacuum would some time after a bulk
 * ingestion: without them PostgreSQL plans the first queries on a fresh copy as if tables were empty.
 */
export async function analyzeDatabase(name) {
  checked(name);
  await withAdmin((c) => c.query("ANALYZE"), databaseUrl(name));
}
