import { spawn } from "node:child_process";
import { chmodSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { createChatService } from "../../src/service.js";
import { TEST_CLI_DIR } from "../support/build-cli.js";
import { tempDir } from "../support/harness.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8).padStart(4, "0");

it("creates a new database's folder 0700 and the database, its -wal and -shm 0600", async () => {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const db = join(dir, "data", "chatsvc.db");
  const service = await createChatService({ env: {}, db, renderWorker: false });
  cleanups.push(() => service.close());
  // A write, so the WAL holds frames and every file exists while the service is open.
  await service.bootstrap({ organizationName: "Acme", email: "owner@acme.test" });
  expect(modeOf(join(dir, "data"))).toBe("0700");
  expect([db, `${db}-wal`, `${db}-shm`].map(modeOf)).toEqual(["0600", "0600", "0600"]);
});

it("`serve` on an existing database readable by others warns how to fix it, and leaves its permissions alone", async () => {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const db = join(dir, "chatsvc.db");
  await setUp(db);
  chmodSync(db, 0o644);
  const out = await serveOutput(db);
  expect(out.stderr).toMatch(/readable or writable by group or others/);
  expect(out.stderr).toContain(`chmod 600 ${db}`);
  // A JSON line for log collectors too.
  const line = out.stderr.split("\n").find((l) => l.startsWith("{") && l.includes("permissions"));
  expect(line, `no JSON warning line on stderr:\n${out.stderr}`).toBeDefined();
  expect(JSON.parse(line!)).toMatchObject({ level: "warn", files: expect.arrayContaining([{ path: db, mode: "0644" }]) });
  expect(modeOf(db)).toBe("0644");
});

it("`serve` on an existing 0600 database prints no permission warning", async () => {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const db = join(dir, "chatsvc.db");
  await setUp(db);
  chmodSync(db, 0o600);
  const out = await serveOutput(db);
  expect(out.stdout).toMatch(/listening on/);
  expect(out.stderr).not.toMatch(/chmod|permission/i);
});

async function setUp(db: string): Promise<void> {
  const service = await createChatService({ env: {}, db, renderWorker: false });
  await service.bootstrap({ organizationName: "Acme", email: "owner@acme.test" });
  await service.close();
}

/** Starts `chatsvc serve` on `db`, waits until it listens, stops it, and returns what it printed. */
async function serveOutput(db: string): Promise<{ stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(TEST_CLI_DIR, "cli.js"), "--db", db, "serve", "--port", "0"], {
    env: { PATH: process.env.PATH ?? "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(() => child.kill("SIGKILL"));
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const until = Date.now() + 15_000;
  while (!/listening on/.test(stdout)) {
    if (Date.now() > until) throw new Error(`serve did not start:\n${stdout}\n${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGTERM");
  await exited;
  return { stdout, stderr };
}
