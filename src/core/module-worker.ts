import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";
import { sourceWorkerBundle } from "./source-worker-bundle.js";

/**
 * Starts the worker whose entry is the module `name` beside the caller
 * (`import.meta.url`): `<name>.js` in the build, which lists it as an entry of
 * its own. Running from the TypeScript sources (tests, tsx), `<name>.ts` is
 * bundled first, as the build bundles it (see source-worker-bundle.ts).
 *
 * @example
 * const worker = startModuleWorker(import.meta.url, "ingest-worker", { workerData });
 */
export function startModuleWorker(here: string, name: string, options: WorkerOptions = {}): Worker {
  const entry = here.endsWith(".ts") ? sourceWorkerBundle(new URL(`./${name}.ts`, here)) : new URL(`./${name}.js`, here);
  if (!existsSync(fileURLToPath(entry))) throw new Error(`${fileURLToPath(entry)} is missing`);
  // Flags of how this process was started (`--input-type`, `-e <script>`, a test runner's loaders) would stop a worker from starting.
  return new Worker(entry, { ...options, execArgv: process.execArgv.filter((arg) => /^--(max|expose|enable|cpu-prof|heap-prof|no-)/.test(arg)) });
}
