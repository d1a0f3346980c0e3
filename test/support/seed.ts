import { resolveConfig, type ChatServiceOptions } from "../../src/core/config.js";

/** The first-run setup every harness does: organisation Acme, its owner, `demo` with the bundled docs, a key. */
export const HARNESS_TENANT = { organizationName: "Acme", email: "owner@acme.test" } as const;

/** The options the seeded PostgreSQL template was set up with. */
export const SEED_OPTIONS: ChatServiceOptions = { env: {}, logLevel: "warn", renderWorker: false };

/** What first-run setup stores that depends on options: a harness whose options differ here sets up for itself. */
const stored = (options: ChatServiceOptions) => {
  const config = resolveConfig(options);
  return JSON.stringify([config.embedModel, config.chunking, config.creditsMonthly]);
};
const seededWith = stored(SEED_OPTIONS);

/**
 * Whether a service opened with `options` would have stored the same first-run setup as the
 * seeded template, so the harness may clone that (one CREATE DATABASE) instead of setting up
 * again (ingesting the bundled docs is most of a PostgreSQL harness's start).
 */
export function seedFits(options: ChatServiceOptions): boolean {
  return stored(options) === seededWith;
}
