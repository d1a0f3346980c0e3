import { join } from "node:path";
import { build, type Options } from "tsup";
import packageBuild, { buildConsole } from "../../tsup.config.js";

/** Where the test build of the CLI goes: tests run the real binary built from the current sources. */
export const TEST_CLI_DIR = join(import.meta.dirname, "..", "..", "node_modules", ".cache", "chatsvc-test-cli");

/**
 * Where the test build of the package entries goes (`index.js`, `h3.js`, `client.js`): the
 * examples' smoke tests import `chatsvc` from here, so a stale `dist/` cannot hide a change.
 */
export const TEST_BUILD_DIR = TEST_CLI_DIR;

/**
 * vitest global setup: one quick ESM build of the package's entries (no type declarations) per test run, and the
 * console's browser bundle into dist/console, where the server (from the sources or this build) reads it.
 */
export default async function setup(): Promise<void> {
  // Both test projects (sqlite, postgres) list this setup; vitest runs each project's in one process: build once.
  const memo = globalThis as { chatsvcTestBuild?: Promise<unknown> };
  await (memo.chatsvcTestBuild ??= Promise.all([buildConsole(), build({
    config: false,
    // The package's own entries, so a new one (like the render worker) cannot be missing from what tests run.
    entry: (packageBuild as Options).entry,
    outDir: TEST_CLI_DIR,
    format: ["esm"],
    target: "node20",
    platform: "node",
    splitting: true,
    skipNodeModulesBundle: true,
    silent: true,
    clean: true,
  })]));
}
