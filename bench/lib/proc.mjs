import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";

const running = new Set();
// Never leave a server behind, whatever happens to the run.
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** Resident memory of a live process in MB, from /proc (`VmRSS`, or `VmHWM` for the peak). */
export function rssOf(pid, field = "VmRSS") {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** CPU seconds a live process has used (user + system, from /proc/<pid>/stat). */
export function cpuSecondsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th of them.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** CPU seconds used by every live process named `name` (all PostgreSQL backends, say, whoever they serve). */
export function cpuSecondsOfAll(name) {
  let total = 0;
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === name) total += cpuSecondsOf(pid) || 0;
    } catch {
      // Ended while we looked.
    }
  }
  return total;
}

/**
 * Samples a process's RSS every `intervalMs` until stopped; returns the samples' max and last.
 *
 * @example
 * const sampler = sampleRss(pid); await load(); const { max } = sampler.stop();
 */
export function sampleRss(pid, intervalMs = 100) {
  let max = rssOf(pid);
  let last = max;
  const timer = setInterval(() => {
    const v = rssOf(pid);
    if (!Number.isNaN(v)) {
      last = v;
      if (v > max || Number.isNaN(max)) max = v;
    }
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return { max, last };
    },
  };
}

/**
 * Starts a child process and resolves once a stdout line matches `ready`
 * (the match is returned), failing with its output when it exits or stalls first.
 *
 * @example
 * const server = await launch("node", ["bench/servers/bare-node.mjs"], { ready: /listening on (\S+)/ });
 * await server.stop();
 */
export function launch(command, args, { ready, env = {}, cwd, timeoutMs = 30_000 }) {
  const child = spawn(command, args, { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  let out = "";
  let err = "";
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => (running.delete(child), resolve({ code, signal }))));
  const started = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} ${args.join(" ")}: not ready after ${timeoutMs} ms\n${out}${err}`)), timeoutMs);
    child.stdout.on("data", (d) => {
      out += d;
      const match = ready.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    child.stderr.on("data", (d) => (err = (err + d).slice(-20_000)));
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${command} ${args.join(" ")} exited (${code ?? signal}) before it was ready:\n${out}${err}`));
    });
  });
  return started.then((match) => ({
    child,
    pid: child.pid,
    match,
    output: () => out + err,
    exited,
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  }));
}

/** Runs a node script to completion; resolves with the last JSON line it printed on stdout. */
export async function runJsonWorker(script, args = [], { env = {}, timeoutMs = 600_000, nodeArgs = [] } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err = (err + d).slice(-20_000)));
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const { code, signal } = await new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  clearTimeout(timer);
  running.delete(child);
  const last = out.trim().split("\n").filter((l) => l.startsWith("{")).pop();
  if (code !== 0 || !last) throw new Error(`${script} failed (${code ?? signal}): ${err.trim().split("\n").slice(-8).join("\n") || out.slice(-2000)}`);
  return JSON.parse(last);
}
