import { build, defineConfig } from "tsup";

/**
 * The operator console's browser bundle (Preact), next to the server build: one
 * minified script and one stylesheet that `createConsoleApp` serves from dist/console.
 * tsup (esbuild) builds it too, so the console needs no second build tool. Tests
 * build it as well (test/support/build-cli.ts), so a served bundle is never older than its sources.
 */
export async function buildConsole(): Promise<void> {
  await build({
    config: false,
    entry: { console: "src/http/console/ui/main.tsx" },
    outDir: "dist/console",
    format: ["esm"],
    platform: "browser",
    target: "es2022",
    minify: true,
    // Preact goes into the bundle: the page loads nothing from elsewhere (works offline, no CDN).
    noExternal: [/.*/],
    splitting: false,
    sourcemap: false,
    clean: false,
    silent: true,
    esbuildOptions(options) {
      options.jsx = "automatic";
      options.jsxImportSource = "preact";
      options.legalComments = "none";
    },
  });
}

/**
 * The worker threads' entries, each built as a file of its own that the module starting it finds beside itself.
 * The bench builds them too (bench/lib/build.mjs builds with these settings): a worker missing there would fall
 * back to the main thread and be measured that way.
 */
const WORKER_ENTRIES = {
  // The renderer starts it with `new Worker(new URL("./render-worker.js", import.meta.url))`.
  "render-worker": "src/render/render-worker.ts",
  // Ingestion's: `startModuleWorker(import.meta.url, "ingest-worker")` starts `./ingest-worker.js`.
  "ingest-worker": "src/knowledge/ingest-worker.ts",
  // Retrieval's (search-thread.ts starts `./search-worker.js`).
  "search-worker": "src/knowledge/search-worker.ts",
  // The SQLite engine's WAL checkpointer (wal-checkpoints.ts starts `./checkpoint-worker.js`).
  "checkpoint-worker": "src/storage/sqlite/checkpoint-worker.ts",
  // And its bulk knowledge writer (knowledge-writer.ts starts `./knowledge-write-worker.js`).
  "knowledge-write-worker": "src/storage/sqlite/knowledge-write-worker.ts",
};

export default defineConfig({
  entry: { index: "src/index.ts", h3: "src/h3.ts", cli: "src/cli.ts", client: "src/client/index.ts", ...WORKER_ENTRIES },
  format: ["esm"],
  target: "node20",
  platform: "node",
  dts: { entry: { index: "src/index.ts", h3: "src/h3.ts", client: "src/client/index.ts" } },
  clean: true,
  sourcemap: true,
  splitting: true,
  // Native addons and every runtime dependency stay external: better-sqlite3 and
  // sqlite-vec must be resolved from node_modules at run time.
  skipNodeModulesBundle: true,
  onSuccess: buildConsole,
});
