import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { inputsHash, stampPath } from "../../scripts/build.mjs";
import { BENCH_DIST } from "../lib/build.mjs";
import { ROOT_DIR } from "../lib/paths.mjs";
import { percentile } from "../lib/stats.mjs";
import { row } from "../lib/table.mjs";

// Issue 15 point 1: the README's `npx chatsvc serve` answers /healthz within 5 s on its first run.
const TARGET_HEALTHZ_MS = 5_000;

/**
 * A fresh checkout as `git clone` + `npm install` leave it, without reinstalling: the tracked (and
 * untracked, not ignored) files, node_modules linked, dist/ from the bench's build of these sources
 * and the build stamp that tells `prepare` dist/ is current (as test/foundation/npx-first-run.test.ts does).
 */
function freshCheckout(dir) {
  const checkout = join(dir, "chatsvc");
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT_DIR, encoding: "utf8" });
  for (const file of files.split("\0").filter((f) => f && existsSync(join(ROOT_DIR, f)))) {
    mkdirSync(dirname(join(checkout, file)), { recursive: true });
    cpSync(join(ROOT_DIR, file), join(checkout, file));
  }
  symlinkSync(join(ROOT_DIR, "node_modules"), join(checkout, "node_modules"), "dir");
  cpSync(BENCH_DIST, join(checkout, "dist"), { recursive: true });
  writeFileSync(stampPath(checkout), `${inputsHash(checkout)}\n`);
  return checkout;
}

/**
 * Spawns `command` in its own process group (as a terminal would) and times its first byte of
 * output and the first 200 from /healthz; then stops the whole group.
 */
async function timeStart(command, args, { cwd, env }) {
  const started = performance.now();
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let out = "";
  let firstOutputMs = null;
  const onData = (chunk) => {
    firstOutputMs ??= performance.now() - started;
    out += chunk;
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    let healthzMs = null;
    while (healthzMs === null) {
      if (child.exitCode !== null || performance.now() - started > 60_000) throw new Error(`${command} ${args.join(" ")}: no /healthz 200:\n${out.slice(-2000)}`);
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      if (url && (await fetch(`${url}/healthz`).then((r) => r.status, () => 0)) === 200) healthzMs = performance.now() - started;
      else await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return { firstOutputMs, healthzMs, firstLine: out.split("\n")[0].slice(0, 120) };
  } finally {
    const kill = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The group is gone.
      }
    };
    kill("SIGTERM");
    const timer = setTimeout(() => kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
    await new Promise((resolve) => setTimeout(resolve, 200));
    kill("SIGKILL"); // a server that outlived npx
  }
}

/**
 * Scenario 9: the README's quick start on a fresh checkout: `npx chatsvc serve` with an empty npm
 * cache (so npx installs the checkout into it, as on a first run), from spawn to first output and to
 * /healthz 200, against `node dist/cli.js serve` on the same checkout; medians of alternating runs.
 */
export async function run(ctx) {
  const runs = ctx.quick ? 3 : 5;
  const dir = mkdtempSync(join(tmpdir(), "chatsvc-bench-npx-"));
  try {
    const checkout = freshCheckout(dir);
    // npm's own variables (set under `npm run bench`) would carry the outer npm's settings into this one.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith("npm_")));
    const npx = [];
    const direct = [];
    for (let i = 0; i < runs; i++) {
      const cache = join(dir, `npm-cache-${i}`);
      npx.push(await timeStart("npx", ["chatsvc", "serve", "--port", "0", "--db", join(dir, `npx-${i}`, "chatsvc.db")], { cwd: checkout, env: { ...env, npm_config_cache: cache, npm_config_update_notifier: "false" } }));
      direct.push(await timeStart(process.execPath, [join(checkout, "dist", "cli.js"), "serve", "--port", "0", "--db", join(dir, `node-${i}`, "chatsvc.db")], { cwd: checkout, env }));
    }
    const median = (list, key) => percentile(list.map((r) => r[key]), 50);
    const healthz = median(npx, "healthzMs");
    const directHealthz = median(direct, "healthzMs");
    ctx.details.npxFirstRun = { npx, direct };
    return [
      row({
        id: "9",
        figure: `npx first run: spawn to first output (median of ${runs}, empty npm cache each)`,
        value: median(npx, "firstOutputMs"),
        unit: "ms",
        baseline: { label: "node dist/cli.js serve", value: median(direct, "firstOutputMs") },
        baselineUnit: "ms",
        note: `first line: "${npx[0].firstLine}"; runs ${npx.map((r) => Math.round(r.firstOutputMs)).join(", ")} ms`,
      }),
      row({
        id: "9",
        figure: `npx first run: spawn to /healthz 200 (median of ${runs}, empty npm cache each)`,
        value: healthz,
        unit: "ms",
        baseline: { label: "node dist/cli.js serve", value: directHealthz },
        baselineUnit: "ms",
        ratio: healthz / directHealthz,
        target: `<= ${TARGET_HEALTHZ_MS / 1000} s`,
        pass: healthz <= TARGET_HEALTHZ_MS,
        note: `runs ${npx.map((r) => Math.round(r.healthzMs)).join(", ")} ms`,
      }),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
