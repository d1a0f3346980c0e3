import { spawn } from "node:child_process";
import { request as netRequest } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { startServer } from "../../src/http/server.js";
import { createChatService, internalsOf } from "../../src/service.js";
import { ingestDocs } from "../chat/helpers.js";
import { startFakeOpenAI } from "../fixtures/fake-openai.js";
import { TEST_CLI_DIR } from "../support/build-cli.js";
import { request, tempDir } from "../support/harness.js";
import { startReceiver } from "../webhooks/support/receiver.js";
import { sqliteOf } from "../support/sqlite.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it("SIGTERM: stops accepting, finishes the in-flight stream, flushes last_used_at, leaves undelivered webhooks pending, logs, exits 0", async () => {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const db = join(dir, "chatsvc.db");
  const fake = await startFakeOpenAI({ reply: "Widgetron installs with npm in a few seconds, as the install guide explains in detail.", deltaDelayMs: 60 });
  cleanups.push(() => fake.close());
  const receiver = await startReceiver(() => ({ hang: true }));
  cleanups.push(() => receiver.close());

  const setup = await createChatService({ env: {}, db, webhooks: { allowPrivateNetworks: true } });
  const tenant = await setup.bootstrap({ organizationName: "Acme", email: "owner@acme.test" });
  await ingestDocs(setup);
  const chunks = (await internalsOf(setup).storage.knowledge.chunksOfChatbot(tenant.chatbot.id)).length;
  await setup.webhooks.register(tenant.organization.id, { url: `${receiver.url}/hook`, events: ["message_received"] });
  await setup.close();

  const child = spawn(process.execPath, [join(TEST_CLI_DIR, "cli.js"), "serve", "--port", "0", "--db", db, "--allow-private-webhooks", "--shutdown-timeout", "15000"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", CHATSVC_CHAT_MODEL: "openai:fake", OPENAI_BASE_URL: fake.baseUrl, CHATSVC_LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(() => child.kill("SIGKILL"));
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  // Waits on what the server says, not on a guess of how long it takes: the test's timeout bounds a server that never says it.
  const said = async (output: () => string, pattern: RegExp) => {
    while (!pattern.test(output())) {
      if (child.exitCode !== null) throw new Error(`serve exited (${child.exitCode}) before printing ${pattern}: ${stdout}${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await said(() => stdout, /listening on (\S+)/);
  // Loaded ahead of the first question, in the search thread.
  await said(() => stderr, /"msg":"vectors loaded"/);
  const base = /listening on (\S+)/.exec(stdout)![1]!;
  const key = tenant.key.key;
  const conversation = (await request(`${base}/api/v1/chatbots/demo/conversations`, { key, json: {} })).body.data.conversation_id;

  // A streamed reply (about 1 s of deltas) is in flight when SIGTERM arrives.
  const response = await fetch(`${base}/api/v1/chatbots/demo/conversations/${conversation}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ message: "How do I install Widgetron?" }),
  });
  const reader = response.body!.getReader();
  let streamed = new TextDecoder().decode((await reader.read()).value);
  child.kill("SIGTERM");
  // Logged in the same synchronous step that closes the listener and the idle connections.
  await said(() => stderr, /"msg":"shutting down"/);
  await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) streamed += new TextDecoder().decode(chunk.value);
  expect(streamed).toContain("event: done");

  expect(await exited).toBe(0);
  const logs = stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  expect(logs.find((l) => l.msg === "vectors loaded")).toMatchObject({ level: "info", chatbots: 1, vectors: chunks });
  expect(logs.find((l) => l.msg === "shutting down")).toMatchObject({ level: "info", signal: "SIGTERM", shutdown_timeout_ms: 15000 });
  expect(logs.find((l) => l.msg === "stopped")).toMatchObject({ level: "info", signal: "SIGTERM" });
  expect(logs.find((l) => l.msg === "request" && l.route?.endsWith("/messages"))).toMatchObject({ status: 200, key_prefix: key.slice(0, 15) });

  const reopened = await createChatService({ env: {}, db });
  cleanups.push(() => reopened.close());
  expect((await reopened.keys.get(tenant.key.id)).last_used_at).not.toBeNull();
  const sqlite = sqliteOf(reopened);
  expect(sqlite.prepare("SELECT role FROM messages WHERE conversation_id = ? ORDER BY id").all(conversation)).toEqual([{ role: "user" }, { role: "assistant" }]);
  // The receiver never answered: the delivery waits in the outbox for the next start.
  expect(sqlite.prepare("SELECT status FROM webhook_deliveries").all()).toEqual([{ status: "pending" }]);
}, 45_000);

/** A bootstrapped in-memory service behind `startServer`, with a shutdown timeout no test should reach. */
async function serving() {
  const service = await createChatService({ env: {}, db: ":memory:", logLevel: "warn" });
  cleanups.push(() => service.close());
  const { key } = await service.bootstrap({ organizationName: "Acme", email: "owner@acme.test", ingestDocs: false });
  return { key, server: await startServer(service, { port: 0, shutdownTimeoutMs: 20_000 }) };
}

it("close() ends connections that never sent a request (spare ones opened ahead of use) at once, and still lets a request in flight finish", async () => {
  const { key, server } = await serving();
  // What a browser's preconnect, or undici after an aborted fetch, leaves: a connection with nothing sent on it.
  const spare = connect(server.port, "127.0.0.1");
  await new Promise((resolve) => spare.once("connect", resolve));
  const spareClosed = new Promise((resolve) => spare.once("close", resolve));
  // A request whose body is still on its way when close() starts.
  const inFlight = netRequest(`${server.url}/api/v1/chatbots/demo/conversations`, { method: "POST", headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json", "content-length": "2" } });
  const answered = new Promise<number>((resolve, reject) => inFlight.once("response", (res) => (res.resume(), resolve(res.statusCode!))).once("error", reject));
  inFlight.write("{");
  await new Promise((resolve) => setTimeout(resolve, 100));
  const started = performance.now();
  const closing = server.close();
  await spareClosed;
  inFlight.end("}");
  expect(await answered).toBe(201);
  await closing;
  // Neither connection waits for its client to close it, nor for the 20 s shutdown timeout.
  expect(performance.now() - started).toBeLessThan(2_000);
});

it("close() answers a new connection's request that arrived but was not read yet, instead of resetting it", async () => {
  const { key, server } = await serving();
  const client = connect(server.port, "127.0.0.1");
  await new Promise((resolve) => client.once("connect", resolve));
  await new Promise((resolve) => setTimeout(resolve, 50)); // accepted by the server, nothing sent yet
  let answer = "";
  client.setEncoding("utf8").on("data", (text: string) => (answer += text));
  const ended = new Promise((resolve) => client.once("close", resolve));
  client.on("error", () => {}); // a reset shows as an empty answer below
  // The whole request reaches the server's socket buffer; close() starts before the server reads it.
  client.write(`GET /api/v1/auth/test HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key.key}\r\nConnection: close\r\n\r\n`);
  await server.close();
  await ended;
  expect(answer).toMatch(/^HTTP\/1\.1 200 /);
});
