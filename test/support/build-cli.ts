import { join } from "node:path";
import { build } from "tsup";

/** Where the test build of the CLI goes: tests run the real binary built from the current sources. */
export const TEST_CLI_DIR = join(import.meta.dirname, "..", "..", "node_modules", ".cache", "chatsvc-test-cli");

/** vitest global setup: one quick ESM build of `src/cli.ts` (no type declarations) per test run. */
export default async function setup(): Promise<void> {
  await build({
    config: false,
    entry: { cli: "src/cli.ts" },
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
