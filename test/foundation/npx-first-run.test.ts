import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
// @ts-expect-error: a plain ESM script without declarations
import { inputsHash, stampPath } from "../../scripts/build.mjs";
import { TEST_BUILD_DIR } from "../support/build-cli.js";
import { tempDir } from "../support/harness.js";

// The README's quick start (`npm install`, then `npx chatsvc serve`) in a fresh checkout, with the real npx. npm 11
// installs the checkout into its own cache on the first `npx chatsvc` and runs `prepare` there; this is that first run.
const repo = join(import.meta.dirname, "..", "..");
let dir: string;
let cleanup: () => void;
let checkout: string;
let npmCache: string;
let distBuiltAt: number;

beforeAll(() => {
  ({ dir, cleanup } = tempDir());
  checkout = join(dir, "chatsvc");
  // The working tree's files as a clone has them (uncommitted changes included), without node_modules or dist.
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: repo, encoding: "utf8" });
  for (const file of files.split("\0").filter((f) => f && existsSync(join(repo, f)))) {
    mkdirSync(dirname(join(checkout, file)), { recursive: true });
    cpSync(join(repo, file), join(checkout, file));
  }
  // What `npm install` leaves: the dependencies and a dist/ built from these sources (the tests' build of them).
  symlinkSync(join(repo, "node_modules"), join(checkout, "node_modules"), "dir");
  cpSync(TEST_BUILD_DIR, join(checkout, "dist"), { recursive: true });
  writeFileSync(stampPath(checkout), `${inputsHash(checkout)}\n`);
  distBuiltAt = statSync(join(checkout, "dist", "cli.js")).mtimeMs;
  // An empty npm cache, so npx has not installed this checkout before.
  npmCache = join(dir, "npm-cache");
});
afterAll(() => cleanup());

it("the first `npx chatsvc serve` does not rebuild, says it is setting up, answers /healthz, and SIGTERM to npx stops the server", async () => {
  const run = startNpx(["serve", "--port", "0", "--db", join(dir, "first", "chatsvc.db")]);
  try {
    const url = await run.listening;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    // How long this takes is measured in bench/ (the npx first-run scenario); here: the cause of the old silent ~40 s (npx running
    // `prepare`, a whole rebuild, in its own install of the checkout) is gone, and the first line says what is happening.
    expect(run.output()).toMatch(/^First run: setting up /);
    expect(statSync(join(checkout, "dist", "cli.js")).mtimeMs, "npx rebuilt dist/").toBe(distBuiltAt);
    await expectStopsWithServer(run, "SIGTERM");
  } finally {
    run.kill();
  }
});

it("a later `npx chatsvc serve` stops with its server on Ctrl-C (SIGINT to its process group)", async () => {
  const run = startNpx(["serve", "--port", "0", "--db", join(dir, "second", "chatsvc.db")]);
  try {
    await run.listening;
    await expectStopsWithServer(run, "SIGINT", { group: true });
  } finally {
    run.kill();
  }
});

it("`npx chatsvc serve` killed outright (a process manager's SIGKILL to npx alone) stops its server, which npm's shell outlives", async () => {
  const run = startNpx(["serve", "--port", "0", "--db", join(dir, "third", "chatsvc.db")]);
  try {
    await run.listening;
    await expectStopsWithServer(run, "SIGKILL");
  } finally {
    run.kill();
  }
});

function startNpx(args: string[]) {
  // npm's own variables (set when the suite runs under `npm test`) would leak the outer npm's settings into this one.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith("npm_")));
  const startedAt = performance.now();
  const child = spawn("npx", ["chatsvc", ...args], {
    cwd: checkout,
    env: { ...env, npm_config_cache: npmCache, npm_config_update_notifier: "false" },
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group, like a command started from a terminal.
    detached: true,
  });
  let out = "";
  const onData = (chunk: Buffer) => {
    out += chunk;
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  // "exit", not "close": the server holds npx's output pipes, so they close only when it is gone too.
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  // "close" comes once every holder of the pipes (the server included) is gone and all they wrote has been read.
  const closed = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const listening = new Promise<string>((resolve, reject) => {
    const check = setInterval(() => {
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      if (url) resolve(url);
      else if (child.exitCode !== null || performance.now() - startedAt > 60_000) reject(new Error(`npx did not start the server:\n${out}`));
      else return;
      clearInterval(check);
    }, 20);
  });
  return {
    child,
    listening,
    exited,
    closed,
    output: () => out,
    // The group outlives npx: a server left behind keeps it.
    kill: () => tryKill(-child.pid!),
  };
}

/** Signals npx alone (a process manager) or, with `group`, its whole process group (what a terminal's Ctrl-C does). */
async function expectStopsWithServer(run: ReturnType<typeof startNpx>, signal: NodeJS.Signals, { group = false } = {}): Promise<void> {
  const server = descendants(run.child.pid!).find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("serve") && comm(pid) === "node");
  expect(server, `server process under npx ${run.child.pid}`).toBeDefined();
  process.kill(group ? -run.child.pid! : run.child.pid!, signal);
  await run.exited;
  const until = performance.now() + 15_000;
  while (existsSync(`/proc/${server}`) && performance.now() < until) await new Promise((r) => setTimeout(r, 50));
  expect(existsSync(`/proc/${server}`), `server ${server} still running after npx exited:\n${run.output()}`).toBe(false);
  // The server is gone, but its last lines may still be in the pipe: read to the end before looking for them.
  await Promise.race([run.closed, new Promise((r) => setTimeout(r, 5_000))]);
  expect(run.output()).toContain("finishing in-flight requests");
}

/** Every process below `pid` (read from /proc), before npx exits and the server could lose its parent. */
function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      // The parent id is the second field after the command name, which is in parentheses and may contain spaces.
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // The process ended while we looked.
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const current = queue.shift()!;
    for (const [child, parent] of parentOf) if (parent === current) (found.push(child), queue.push(child));
  }
  return found;
}

function comm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

function tryKill(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}
