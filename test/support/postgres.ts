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

function createClone(adminUrl: string, template: string): Promise<string> {
  const name = `${template}_${process.pid}_${++counter}`;
  const made = withAdmin(adminUrl, (c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`)).then(() => name);
  made.catch(() => {}); // a prefetch nobody takes must not fail the run; a taken one rethrows below
  return made;
}

/**
 * A fresh database cloned from the run's migrated template (see postgres-setup.ts):
 * its URL and a function that drops it. Cloning copies files, much faster than migrating;
 * the next clone is already being made when this one is handed out, and dropping does not
 * wait for the server (the run's teardown drops whatever is left).
 *
 * @example
 * const { url, drop } = await cloneTestDatabase(template);
 */
export async function cloneTestDatabase(adminUrl: string, template: string): Promise<{ url: string; drop(): Promise<void> }> {
  const key = `${adminUrl} ${template}`;
  const taken = prefetched.get(key) ?? createClone(adminUrl, template);
  prefetched.set(key, createClone(adminUrl, template));
  const name = await taken;
  return {
    url: databaseUrl(adminUrl, name),
    drop: async () => {
      void withAdmin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).catch(() => {});
    },
  };
}
