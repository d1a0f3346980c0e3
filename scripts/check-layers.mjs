#!/usr/bin/env node
// Checks the layers of DESIGN.md section 1 over src/: no module imports from a
// higher layer, and no two folders import each other. Type-only imports count.
// Usage: node scripts/check-layers.mjs   (exit code 1 and a list when violated)
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "..", "src");

/**
 * Each unit's layer, bottom up; a unit is a folder of src/ or a file at its root.
 * A unit may import its own layer's or lower layers' units, never a higher one's.
 */
export const LAYERS = {
  core: 0,
  storage: 1,
  net: 1,
  knowledge: 2,
  models: 3,
  analytics: 3,
  render: 3,
  webhooks: 3,
  chat: 4,
  "service.ts": 5,
  "bootstrap.ts": 5,
  "index.ts": 6,
  http: 6,
  "h3.ts": 7,
  cli: 7,
  "cli.ts": 8,
  // The typed client stands alone at the top: it may borrow the server's types, nothing imports it.
  client: 8,
  "client.ts": 9,
};

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g;

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return /\.(ts|mts|js|mjs)$/.test(name) ? [path] : [];
  });
}

// A root file is named as on disk (`service.ts`), also when imported as `./service.js`.
const unitOf = (file) => relative(SRC, file).split(sep)[0].replace(/\.js$/, ".ts");

/** Every import from one unit of src/ to another: `[from file, to file]`. */
export function crossUnitImports() {
  const edges = [];
  for (const file of files(SRC)) {
    if (file.includes(`${sep}widget${sep}client${sep}`)) continue; // browser code, served as a file
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[1] ?? match[2];
      if (!spec.startsWith(".")) continue;
      const target = resolve(dirname(file), spec);
      if (!target.startsWith(SRC + sep)) continue;
      if (unitOf(target) !== unitOf(file)) edges.push([file, target]);
    }
  }
  return edges;
}

/** Human-readable violations of `layers`; empty when they hold. */
export function layerViolations(layers = LAYERS) {
  const problems = [];
  const pairs = new Set();
  for (const [from, to] of crossUnitImports()) {
    const a = unitOf(from);
    const b = unitOf(to);
    if (!(a in layers)) problems.push(`${relative(SRC, from)}: unit "${a}" has no layer in scripts/check-layers.mjs`);
    else if (!(b in layers)) problems.push(`${relative(SRC, from)} imports ${relative(SRC, to)}: unit "${b}" has no layer`);
    else if (layers[b] > layers[a]) problems.push(`${relative(SRC, from)} imports ${relative(SRC, to)}: ${a} (layer ${layers[a]}) may not import ${b} (layer ${layers[b]})`);
    pairs.add(`${a}>${b}`);
  }
  for (const pair of pairs) {
    const [a, b] = pair.split(">");
    if (a < b && pairs.has(`${b}>${a}`)) problems.push(`${a} and ${b} import each other`);
  }
  return [...new Set(problems)];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const problems = layerViolations();
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(`${problems.length} layer violation(s)`);
    process.exit(1);
  }
  console.log("layers ok");
}
