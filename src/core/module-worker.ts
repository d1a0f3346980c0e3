import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";

/**
 * Starts the worker whose entry is the module `name` beside the caller
 * (`import.meta.url`): `<name>.js` in the build, which lists it as an entry of
 * its own. Running from the TypeScript sources (tests, tsx), `<name>.ts` is
 * loaded through tsx, which is then installed as a development dependency.
 *
 * @example
 * const worker = startModuleWorker(import.meta.url, "ingest-worker", { workerData });
 */
export function startModuleWorker(here: string, name: string, options: WorkerOptions = {}): Worker {
  if (here.endsWith(".ts")) {
    const entry = new URL(`./${name}.ts`, here).href;
    const tsx = import.meta.resolve("tsx/esm/api");
    const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
    return new Worker(boot, { ...options, eval: true });
  }
  const entry = new URL(`./${name}.js`, here);
  if (!existsSync(fileURLToPath(entry))) throw new Error(`${fileURLToPath(entry)} is missing`);
  // Flags of how this process was started (`--input-type`, `-e <script>`) would stop a worker from starting.
  return new Worker(entry, { ...options, execArgv: process.execArgv.filter((arg) => /^--(max|expose|enable|cpu-prof|heap-prof|no-)/.test(arg)) });
}
