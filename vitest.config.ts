import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { testDatabaseUrl, unreachable } from "./test/support/postgres.js";

/**
 * The behaviour suites (service and HTTP level) that run on PostgreSQL too, from
 * the same files: the harness opens the service on a fresh PostgreSQL database in
 * the `postgres` project. The rest (SQLite files, CLI, parsing, models) runs once.
 */
const BEHAVIOUR_SUITES = [
  "test/foundation/auth.test.ts",
  "test/foundation/envelope.test.ts",
  "test/foundation/first-run.test.ts",
  "test/analytics/**/*.test.ts",
  "test/chat/**/*.test.ts",
  "test/knowledge/ingest.test.ts",
  "test/knowledge/ingest-ahead.test.ts",
  "test/knowledge/retrieval-quality.test.ts",
  "test/knowledge/vector-search.test.ts",
  "test/knowledge/url-policy.test.ts",
  "test/knowledge/sync.test.ts",
  "test/webhooks/chat-flow.test.ts",
  "test/webhooks/delivery.test.ts",
  "test/webhooks/registration.test.ts",
  "test/widget/access.test.ts",
  "test/widget/flow.test.ts",
  "test/widget/token.test.ts",
  "test/hardening/concurrency.test.ts",
  "test/hardening/cross-tenant.test.ts",
  "test/hardening/fuzz.test.ts",
  "test/hardening/raw-requests.test.ts",
  "test/hardening/request-hardening.test.ts",
  "test/hardening/xss.test.ts",
  "test/storage/**/*.test.ts",
  "test/privacy/exports.test.ts",
  "test/privacy/erasure.test.ts",
];

/** Suites about PostgreSQL itself (several instances on one database, moving up from SQLite): the postgres project only. */
const POSTGRES_ONLY = ["test/postgres/**/*.test.ts", "test/scale/**/*.test.ts"];

const shared = {
  testTimeout: 20_000,
  hookTimeout: 20_000,
  pool: "forks",
  // Most files wait on sockets and child processes, not the CPU: more workers than cores
  // keeps both cores busy (vitest's default on 2 cores is a single worker).
  maxWorkers: 4,
  // Every file builds its own services on its own temp databases, so files can share a
  // worker's module cache: importing the service graph per file was most of the suite's CPU.
  isolate: false,
} as const;

/**
 * The `postgres` project when a server answers at CHATSVC_TEST_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test). Without one, `npm test` still passes and
 * says which suites it skipped; under CI (CI=true) a missing server fails the run.
 */
async function postgresProject(): Promise<TestProjectInlineConfiguration[]> {
  const url = testDatabaseUrl();
  const why = await unreachable(url);
  if (why) {
    const message = `PostgreSQL does not answer at ${url} (${why})`;
    if (process.env.CI) throw new Error(`${message}: CI runs the behaviour suites on PostgreSQL and must not skip them.`);
    console.warn(
      `\n[chatsvc tests] ${message}.\n[chatsvc tests] SKIPPED on PostgreSQL (they still run on SQLite): ${BEHAVIOUR_SUITES.join(", ")}.\n` +
        `[chatsvc tests] SKIPPED entirely (PostgreSQL only): ${POSTGRES_ONLY.join(", ")}.\n` +
        "[chatsvc tests] Set CHATSVC_TEST_DATABASE_URL to a server where the user may create databases to run them.\n",
    );
    return [];
  }
  return [
    {
      test: {
        ...shared,
        name: "postgres",
        include: [...BEHAVIOUR_SUITES, ...POSTGRES_ONLY],
        // Four files at a time, some with several instances: a smaller pool than the default keeps the
        // run well under the server's max_connections, and runs the product on a pool that small.
        env: { CHATSVC_TEST_ENGINE: "postgres", CHATSVC_TEST_DATABASE_URL: url, CHATSVC_DATABASE_POOL_SIZE: "4" },
        globalSetup: ["test/support/build-cli.ts", "test/support/postgres-setup.ts"],
      },
    },
  ];
}

export default defineConfig(async () => ({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: "sqlite",
          include: ["test/**/*.test.ts"],
          exclude: POSTGRES_ONLY,
          globalSetup: ["test/support/build-cli.ts"],
        },
      },
      ...(await postgresProject()),
    ],
  },
}));
