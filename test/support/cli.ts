import { spawn } from "node:child_process";
import { join } from "node:path";
import { TEST_CLI_DIR } from "./build-cli.js";

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
