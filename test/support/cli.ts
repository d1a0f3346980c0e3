import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createChatService, type ChatService } from "../../src/service.js";
import { eventually } from "../webhooks/support/receiver.js";
import { TEST_CLI_DIR } from "./build-cli.js";
import { tempDir } from "./harness.js";

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (throws if it is not exactly one JSON document). */
  json(): any;
}

/** Runs the chatsvc CLI (built from the current sources) as a real process. */
export function runCli(args: string[], { env = {}, cwd }: { env?: Record<string, string>; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(TEST_CLI_DIR, "cli.js"), ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) }));
  });
}

/** A test's own folder and SQLite file for the CLI, so that CLI tests can run at the same time. */
export interface CliWorkspace {
  dir: string;
  /** Runs the CLI on this workspace's database. */
  cli(args: string[], env?: Record<string, string>): Promise<CliResult>;
  /** Opens the library on the same database for `run`, then closes it: records a test starts from, made without the CLI. */
  withService<T>(run: (service: ChatService) => Promise<T>): Promise<T>;
}

/** Gives `use` a fresh {@link CliWorkspace} and removes its folder afterwards (the body of a vitest fixture). */
export async function inCliWorkspace(use: (workspace: CliWorkspace) => Promise<void>): Promise<void> {
  const { dir, cleanup } = tempDir();
  const db = join(dir, "cli.db");
  try {
    await use({
      dir,
      cli: (args, env = {}) => runCli(["--db", db, ...args], { env }),
      async withService(run) {
        const service = await createChatService({ db, env: {}, logLevel: "warn", renderWorker: false });
        try {
          return await run(service);
        } finally {
          await service.close();
        }
      },
    });
  } finally {
    cleanup();
  }
}

/** A running `chatsvc serve` process and where it listens. */
export interface ServeProcess {
  url: string;
  child: ChildProcess;
  /** Settles with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

/**
 * Starts `chatsvc serve --port 0` (built from the current sources) with the global `args` before
 * `serve` and `serveArgs` after it, and waits (up to 30 s) until it says where it listens.
 */
export async function startServe(args: string[], serveArgs: string[], env: Record<string, string>): Promise<ServeProcess> {
  const child = spawn(process.execPath, [join(TEST_CLI_DIR, "cli.js"), ...args, "serve", "--port", "0", ...serveArgs], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const url = await eventually(() => out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/)?.[1], 30_000, 50).catch(() => {
    throw new Error(`chatsvc serve did not start:\n${out}`);
  });
  return { url, child, exited };
}
