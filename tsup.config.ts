import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    h3: "src/h3.ts",
    cli: "src/cli.ts",
    client: "src/client/index.ts",
    // Its own file: the renderer starts it with `new Worker(new URL("./render-worker.js", import.meta.url))`.
    "render-worker": "src/render/render-worker.ts",
  },
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
});
