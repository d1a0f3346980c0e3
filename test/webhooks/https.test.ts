import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../src/index.js";
import { createChatService } from "../../src/service.js";
import { createSender } from "../../src/webhooks/deliver.js";
import { tempDir } from "../support/harness.js";
import { eventually } from "./support/receiver.js";
import { startTlsReceiver, TEST_CA_FILE } from "./support/tls-receiver.js";
import { sqliteOf } from "../support/sqlite.js";

/*
 * Webhooks over real TLS. Node 20 cannot add a trusted CA at runtime, so the
 * delivering service runs in a child process started with NODE_EXTRA_CA_CERTS
 * pointing at the fixture CA (test/fixtures/tls), while the TLS receivers run
 * here. The child is the crash test's burst child: it opens the database with
 * `allowPrivateNetworks: true` (loopback), 3 quick retries and a 1 s attempt
 * timeout, emits the events and then waits to be killed.
 */
const CHILD = fileURLToPath(new URL("./fixtures/burst-child.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface DeliveryRow {
  webhook_id: number;
  status: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
}

describe("webhook delivery over https", () => {
  it("delivers to a trusted https://localhost receiver (SNI localhost) and fails cleanly, with the TLS error stored, on untrusted or mismatched certificates", async () => {
    const trusted = await startTlsReceiver("localhost");
    cleanups.push(() => trusted.close());
    const selfSigned = await startTlsReceiver("untrusted");
    cleanups.push(() => selfSigned.close());
    const otherHost = await startTlsReceiver("other-host");
    cleanups.push(() => otherHost.close());

    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const db = `${dir}/chatsvc.db`;
    const setup = await createChatService({ env: {}, db, webhooks: { allowPrivateNetworks: true } });
    const tenant = await setup.bootstrap({ organizationName: "Acme", email: "owner@acme.test" });
    const org = tenant.organization.id;
    const good = await setup.webhooks.register(org, { url: `${trusted.url}/hook`, events: ["message_received"] });
    const bad = await setup.webhooks.register(org, { url: `${selfSigned.url}/hook`, events: ["message_received"] });
    const mismatched = await setup.webhooks.register(org, { url: `${otherHost.url}/hook`, events: ["message_received"] });
    await setup.close();

    // Trust comes from the fixture CA alone: no inherited switch may turn verification off.
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_EXTRA_CA_CERTS: TEST_CA_FILE };
    delete env.NODE_TLS_REJECT_UNAUTHORIZED;
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, db, String(org), "1"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    cleanups.push(async () => {
      child.kill("SIGKILL");
      await exited;
    });

    // 1. The trusted receiver gets the signed POST.
    const [got] = await trusted.waitFor(1, 30_000).catch((error: Error) => {
      throw new Error(`${error.message}; child output: ${output}`);
    });
    expect(got).toMatchObject({ method: "POST", path: "/hook" });
    expect(got!.headers["webhook-id"]).toMatch(/^msg_/);
    expect(got!.headers["webhook-timestamp"]).toMatch(/^\d+$/);
    expect(got!.headers["webhook-signature"]).toMatch(/^v1,/);
    expect(got!.headers.host).toBe(`localhost:${trusted.port}`);
    expect(got!.json).toMatchObject({ event: "message_received", data: { id: 1, content: "Hello?" } });
    expect(verifyWebhook(good.secret!, got!.headers, got!.body)).toBe(true);
    // The policy lookup connected to 127.0.0.1, yet the TLS server name stayed the host name.
    expect(trusted.servernames).toEqual(["localhost"]);

    // 2. Every delivery finishes: the bad ones after their retry budget (1 attempt + 3 retries).
    const reader = new Database(db, { readonly: true, fileMustExist: true });
    cleanups.push(() => void reader.close());
    const deliveries = () => reader.prepare("SELECT webhook_id, status, attempts, last_status, last_error FROM webhook_deliveries").all() as DeliveryRow[];
    await eventually(() => deliveries().length === 3 && deliveries().every((row) => row.status !== "pending"), 30_000, 25).catch((error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(deliveries())}; child output: ${output}`);
    });
    const byWebhook = new Map(deliveries().map((row) => [row.webhook_id, row]));
    expect(byWebhook.get(good.webhook.id)).toEqual({ webhook_id: good.webhook.id, status: "delivered", attempts: 1, last_status: 200, last_error: null });
    expect(byWebhook.get(bad.webhook.id)).toMatchObject({ status: "failed", attempts: 4, last_status: null });
    expect(byWebhook.get(bad.webhook.id)!.last_error).toMatch(/^DEPTH_ZERO_SELF_SIGNED_CERT: self[- ]signed certificate$/);
    expect(byWebhook.get(mismatched.webhook.id)).toMatchObject({ status: "failed", attempts: 4, last_status: null });
    expect(byWebhook.get(mismatched.webhook.id)!.last_error).toMatch(
      /^ERR_TLS_CERT_ALTNAME_INVALID: Hostname\/IP does not match certificate's altnames: Host: localhost\. is not in the cert's altnames: DNS:other\.invalid$/,
    );

    // The refused receivers saw handshakes (the name was sent) but never a request.
    expect(selfSigned.received).toEqual([]);
    expect(otherHost.received).toEqual([]);
    expect(selfSigned.tlsErrors.length + otherHost.tlsErrors.length).toBeGreaterThan(0);
    expect(trusted.received).toHaveLength(1);
    expect(child.exitCode).toBeNull(); // Nothing crashed: the child still runs.

    child.kill("SIGKILL");
    await exited;
    const reopened = await createChatService({ env: {}, db, webhooks: { allowPrivateNetworks: true } });
    cleanups.push(() => reopened.close());
    const listed = new Map((await reopened.webhooks.list(org)).map((w) => [w.id, w]));
    expect(listed.get(good.webhook.id)).toMatchObject({ is_active: true, total_triggers: 1, failed_triggers: 0, last_failure: null });
    expect(listed.get(bad.webhook.id)).toMatchObject({ is_active: true, total_triggers: 1, failed_triggers: 1 });
    // What an operator reads in GET /webhooks and `chatsvc webhooks list` to see why.
    expect(listed.get(bad.webhook.id)!.last_failure).toEqual({ at: expect.any(String), status: null, error: byWebhook.get(bad.webhook.id)!.last_error });
    expect(listed.get(mismatched.webhook.id)).toMatchObject({ is_active: true, total_triggers: 1, failed_triggers: 1 });
    expect(sqliteOf(reopened).prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'").get()).toEqual({ n: 0 });
  }, 75_000);

  it.skipIf(process.env.NODE_TLS_REJECT_UNAUTHORIZED === "0")("refuses the same receiver where the fixture CA is not trusted (this process)", async () => {
    const trusted = await startTlsReceiver("localhost");
    cleanups.push(() => trusted.close());
    const sender = createSender({ allowPrivateNetworks: true, timeoutMs: 5_000 });
    cleanups.push(() => sender.close());
    const outcome = await sender.send({ url: `${trusted.url}/hook`, key: Buffer.from("k"), messageId: "msg_1", payload: '{"event":"x","data":{}}' });
    expect(outcome).toMatchObject({ ok: false, status: null, error: expect.stringMatching(/^UNABLE_TO_VERIFY_LEAF_SIGNATURE: /) });
    expect(trusted.received).toEqual([]);
  });
});
