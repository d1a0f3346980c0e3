import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { TEST_CLI_DIR } from "../support/build-cli.js";
import { request, tempDir } from "../support/harness.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

it("`chatsvc serve` on an empty folder sets everything up and answers with the printed key, then stops on SIGTERM", async () => {
  const child = spawn(process.execPath, [join(TEST_CLI_DIR, "cli.js"), "serve", "--port", "0"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  try {
    await waitFor(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.test(out), 15_000, () => out);
    const url = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/)![1];
    const key = out.match(/sk_live_[0-9A-Za-z]{32}/)![0];
    expect(out).toContain(".chatsvc/chatsvc.db");
    const res = await request(`${url}/api/v1/auth/test`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, message: "Authentication successful" });
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  } finally {
    child.kill("SIGKILL");
  }
});

async function waitFor(check: () => boolean, ms: number, describe: () => string): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out; output so far:\n${describe()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
