#!/usr/bin/env node
// Top functions by self time in a V8 .cpuprofile (from `npm run bench -- --profile`).
// Usage: node bench/profile-summary.mjs <file.cpuprofile> [count] [--callers=<function name>] [--inclusive]
import { readFileSync } from "node:fs";

const positional = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const callersOf = process.argv.find((a) => a.startsWith("--callers="))?.slice("--callers=".length);
const [file, countArg = "25"] = positional;
const profile = JSON.parse(readFileSync(file, "utf8"));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const byFunction = new Map();
for (const [id, us] of self) {
  const { functionName, url, lineNumber } = byId.get(id).callFrame;
  const key = `${functionName || "(anonymous)"}  ${url.replace(/^file:\/\/.*?\/(node_modules|bench|src)\//, "$1/").replace(/^file:\/\/\/work\/main\//, "")}:${lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
}
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
for (const [key, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(countArg))) {
  console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${key}`);
}

// Self time of a function split by its call paths (up to 4 frames), to find who calls it.
if (callersOf) {
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (id) => {
    const f = byId.get(id).callFrame;
    return `${f.functionName || "(anonymous)"}@${f.url.split("/").pop()}:${f.lineNumber + 1}`;
  };
  const paths = new Map();
  for (const [id, us] of self) {
    if (byId.get(id).callFrame.functionName !== callersOf) continue;
    const chain = [];
    for (let p = parent.get(id); p !== undefined && chain.length < 4; p = parent.get(p)) chain.push(label(p));
    const key = chain.join(" <- ");
    paths.set(key, (paths.get(key) ?? 0) + us);
  }
  console.log(`\ncallers of ${callersOf}:`);
  for (const [key, us] of [...paths].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`${(us / 1000).toFixed(0).padStart(6)} ms  ${key}`);
}

// Total (inclusive) time per function: where whole request paths go.
if (process.argv.includes("--inclusive")) {
  const totals = new Map();
  const visit = (id, stack) => {
    const node = byId.get(id);
    const f = node.callFrame;
    const key = `${f.functionName || "(anonymous)"}  ${f.url.replace(/^file:\/\/\/work\/main\//, "")}:${f.lineNumber + 1}`;
    let sum = self.get(id) ?? 0;
    for (const c of node.children ?? []) sum += visit(c, stack.concat(key));
    // Count each function once per path (recursion would double it).
    if (!stack.includes(key)) totals.set(key, (totals.get(key) ?? 0) + sum);
    return sum;
  };
  visit(profile.nodes[0].id, []);
  console.log("\ninclusive:");
  for (const [key, us] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, Number(countArg))) {
    console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${key}`);
  }
}
