#!/usr/bin/env node
// Builds dist/ with tsup and records a hash of what the build read. With `--if-stale` (the `prepare` script) it builds
// only when that hash changed.
//
// Why: `prepare` runs on `npm install` in a checkout, and again on the first `npx chatsvc` there. npm 11's npx sees
// that the project itself declares the `chatsvc` bin and, before it looks in node_modules/.bin, installs the project
// into its own cache (~/.npm/_npx) as a linked directory, which runs the link's `prepare` with its output hidden
// (libnpmexec's "self-execution of a local bin"). A full build there kept the first `npx chatsvc serve` silent for
// ~40 s; a check that finds dist/ current takes milliseconds.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Where the hash of the last build's inputs is kept; tsup's `clean` removes it with the rest of dist/. */
export const stampPath = (root = projectRoot) => join(root, "dist", ".build-inputs");
// Everything tsup reads from the project: sources, its config, compiler options, the entry and dependency lists.
const inputs = ["src", "tsup.config.ts", "tsconfig.json", "package.json", "package-lock.json"];

/** SHA-256 over the paths and contents of the build's inputs, in a stable order. */
export function inputsHash(root = projectRoot) {
  const hash = createHash("sha256");
  for (const file of inputs.flatMap((input) => listFiles(join(root, input))).sort()) {
    hash.update(`${relative(root, file)}\0`).update(readFileSync(file)).update("\0");
  }
  return hash.digest("hex");
}

function listFiles(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

function isCurrent(hash) {
  return existsSync(join(projectRoot, "dist", "cli.js")) && existsSync(stampPath()) && readFileSync(stampPath(), "utf8").trim() === hash;
}

function build(hash) {
  const tsupPackage = createRequire(import.meta.url).resolve("tsup/package.json");
  const tsupCli = join(dirname(tsupPackage), JSON.parse(readFileSync(tsupPackage, "utf8")).bin.tsup);
  const { status } = spawnSync(process.execPath, [tsupCli], { cwd: projectRoot, stdio: "inherit" });
  if (status !== 0) process.exit(status ?? 1);
  // tsup's `clean` emptied dist/ first, so a failed build leaves no stamp and the next `prepare` builds again.
  writeFileSync(stampPath(), `${hash}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const hash = inputsHash();
  if (!(process.argv.includes("--if-stale") && isCurrent(hash))) build(hash);
}
