import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { TEST_BUILD_DIR } from "../../support/build-cli.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const HOOK = join(import.meta.dirname, "fresh-build.mjs");

export interface RunningExample {
  /** What the example printed as `listening on <url>`. */
  url: string;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Waits until the output matches, e.g. a webhook the receiver logged. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  stop(): Promise<void>;
}

/**
 * Spawns an example as a user would (`node examples/<name>/<file>`), with
 * `chatsvc` resolved to the test build of the current sources, and resolves
 * once it prints the URL it listens on (it gets `PORT=0`).
 */
export async function startExample(file: string, env: Record<string, string> = {}): Promise<RunningExample> {
  const child = spawnExample(file, [], { PORT: "0", ...env });
  let output = "";
  const watchers = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk;
    for (const watcher of watchers) watcher();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const waitFor = (pattern: RegExp, timeoutMs = 10_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(output);
        if (match) {
          done();
          resolve(match);
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${file}: no ${pattern} in output:\n${output}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        watchers.delete(check);
        child.off("exit", onExit);
      };
      const onExit = () => {
        done();
        reject(new Error(`${file} exited (${child.exitCode}) before printing ${pattern}:\n${output}`));
      };
      watchers.add(check);
      child.once("exit", onExit);
      check();
    });

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  try {
    const [, url] = await waitFor(/listening on (http:\/\/\S+)/);
    return { url: url!, output: () => output, waitFor, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Runs an example script to completion. */
export function runExample(file: string, args: string[] = [], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const child = spawnExample(file, args, env);
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

function spawnExample(file: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ["--import", HOOK, join(ROOT, "examples", file), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", CHATSVC_TEST_BUILD_DIR: TEST_BUILD_DIR, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}
