import { join } from "node:path";
import { build } from "tsup";

/** Where the test build of the CLI goes: tests run the real binary built from the current sources. */
export const TEST_CLI_DIR = join(import.meta.dirname, "..", "..", "node_modules", ".cache", "chatsvc-test-cli");

/**
 * Where the test build of the package entries goes (`index.js`, `h3.js`, `client.js`): the
 * examples' smoke tests import `chatsvc` from here, so a stale `dist/` cannot hide a change.
 */
export const TEST_BUILD_DIR = TEST_CLI_DIR;

/** vitest global setup: one quick ESM build of the CLI and the package entries (no type declarations) per test run. */
export default async function setup(): Promise<void> {
  await build({
    config: false,
    entry: { cli: "src/cli.ts", index: "src/index.ts", h3: "src/h3.ts", client: "src/client/index.ts", "render-worker": "src/core/render-worker.ts" },
    outDir: TEST_CLI_DIR,
    format: ["esm"],
    target: "node20",
    platform: "node",
    splitting: true,
    skipNodeModulesBundle: true,
    silent: true,
    clean: true,
  });
}
