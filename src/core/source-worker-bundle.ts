import { createHash } from "node:crypto";
import { mkdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { packageRoot } from "./package-root.js";

type Esbuild = typeof import("esbuild");

interface Bundle {
  url: URL;
  /** Every source file in the bundle with its modification time when bundled (NaN: it changed meanwhile). */
  inputs: [path: string, mtimeMs: number][];
}

const bundles = new Map<string, Bundle>();

/**
 * A worker entry of the TypeScript sources (`src/knowledge/search-worker.ts`), bundled into one ES module
 * under node_modules/.cache with its dependencies left to node_modules, as the package build bundles it.
 * A worker started from the sources would otherwise register a TypeScript loader (tsx) on a loader thread
 * of its own and compile module by module, which cost more than the worker's own start; the test suite
 * starts search, ingestion and writer threads from the sources many times.
 * Bundled once per process, again when a source file in it changes (watch mode); the file is named
 * for its content, so processes running at once share it and never see another's half-written file.
 * esbuild comes with the development dependencies (tsup builds with it); the built package never gets here.
 */
export function sourceWorkerBundle(entry: URL): URL {
  const key = fileURLToPath(entry);
  const known = bundles.get(key);
  if (known && known.inputs.every(([path, mtimeMs]) => mtime(path) === mtimeMs)) return known.url;
  const root = packageRoot();
  const esbuild = createRequire(import.meta.url)("esbuild") as Esbuild;
  const startedMs = Date.now();
  const built = esbuild.buildSync({
    entryPoints: [key],
    absWorkingDir: root,
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: "inline",
    metafile: true,
    write: false,
    logLevel: "silent",
  });
  const code = built.outputFiles[0]!.contents;
  const dir = join(root, "node_modules", ".cache", "chatsvc-source-workers");
  const name = key.replace(/^.*[\\/]/, "").replace(/\.ts$/, "");
  const file = join(dir, `${name}-${createHash("sha256").update(code).digest("hex").slice(0, 16)}.mjs`);
  if (mtime(file) === undefined) {
    mkdirSync(dir, { recursive: true });
    const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(partial, code);
    renameSync(partial, file);
  }
  const inputs = Object.keys(built.metafile.inputs).map((relative): [string, number] => {
    const path = join(root, relative);
    const modified = mtime(path) ?? 0;
    // Saved while esbuild read it: what the bundle holds is unknown, so the next start bundles again.
    return [path, modified >= startedMs ? Number.NaN : modified];
  });
  const bundle = { url: pathToFileURL(file), inputs };
  bundles.set(key, bundle);
  return bundle.url;
}

function mtime(path: string): number | undefined {
  return statSync(path, { throwIfNoEntry: false })?.mtimeMs;
}
