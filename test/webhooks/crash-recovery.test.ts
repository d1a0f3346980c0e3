import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createChatService } from "../../src/service.js";
import { tempDir } from "../support/harness.js";
import { eventually, startReceiver } from "./support/receiver.js";
import { sqliteOf } from "../support/sqlite.js";

const CHILD = fileURLToPath(new URL("./fixtures/burst-child.ts", import.meta.url));
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("crash recovery", () => {
  it("delivers every event of a burst after the process is SIGKILLed mid-burst and restarted", async () => {
    let slow = true;
    const r = await startReceiver(() => (slow ? { delayMs: 100 } : {}));
    cleanups.push(() => r.close());
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const db = `${dir}/chatsvc.db`;
    const setup = await createChatService({ env: {}, db, webhooks: { allowPrivateNetworks: true } });
    const tenant = await setup.bootstrap({ organizationName: "Acme", email: "owner@acme.test" });
    await setup.webhooks.register(tenant.organization.id, { url: `${r.url}/hook`, events: ["message_received"] });
    await setup.close();

    const child = spawn(process.execPath, ["--import", "tsx", CHILD, db, String(tenant.organization.id), "40"], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      stdio: ["ignore", "pipe", "inherit"],
    });
    cleanups.push(() => void child.kill("SIGKILL"));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    await eventually(() => output.includes("emitted") && r.received.length >= 3, 30_000, 5);
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    const beforeCrash = r.received.length;
    expect(beforeCrash).toBeLessThan(40);

    slow = false;
    const restarted = await createChatService({ env: {}, db, webhooks: { allowPrivateNetworks: true, retryDelaysMs: [50, 50, 50], timeoutMs: 1_000 } });
    cleanups.push(() => restarted.close());
    const rows = () =>
      sqliteOf(restarted).prepare("SELECT message_id, status FROM webhook_deliveries").all() as { message_id: string; status: string }[];
    expect(rows()).toHaveLength(40);
    await eventually(() => rows().every((row) => row.status === "delivered"), 10_000);

    // At-least-once: duplicates are possible (cut off in flight), and dedupable by webhook-id.
    const byId = new Map(r.received.map((g) => [g.headers["webhook-id"] as string, g.json.data.id as number]));
    expect(new Set(rows().map((row) => row.message_id))).toEqual(new Set(byId.keys()));
    expect([...byId.values()].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect((await restarted.webhooks.list())[0]).toMatchObject({ total_triggers: 40, failed_triggers: 0 });
  }, 60_000);
});
