import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChatService } from "../../src/service.js";
import { runCli, startServe, type ServeProcess } from "../support/cli.js";
import { request, type ApiResponse } from "../support/harness.js";
import { databaseUrl, testDatabaseUrl, withAdmin } from "../support/postgres.js";

/*
 * Immediate revocation across instances: real `chatsvc serve` processes on one
 * PostgreSQL database, a key revoked through one of them (its console, over
 * HTTP) or the CLI, and the very next request to another refused, with no
 * waiting in between. A and B rate-limit (the counter comes with the buckets'
 * statement); C runs without rate limits (it reads the counter on its own).
 */

const admin = testDatabaseUrl();
const name = `scale_revocation_${process.pid}`;
const url = databaseUrl(admin, name);
const quiet = { CHATSVC_LOG_LEVEL: "warn" };

type Instance = ServeProcess;

let a: Instance;
let b: Instance;
let c: Instance;
let ownerKey: string;
let consoleCookie: string;

const startInstance = (env: Record<string, string>): Promise<Instance> => startServe(["--database-url", url], [], { ...quiet, ...env });

const authTest = (instance: Instance, key: string): Promise<ApiResponse> => request(`${instance.url}/api/v1/auth/test`, { key });

/** A console request to instance A, from its own page. */
function consoleOnA(path: string, init: { method?: string; json?: unknown } = {}): Promise<ApiResponse> {
  return request(`${a.url}/console/api/${path}`, { ...init, headers: { origin: a.url, cookie: `chatsvc_console=${consoleCookie}` } });
}

/** A new key of the owner, created through A's console and verified (so remembered) by every instance. */
async function rememberedKey(): Promise<{ id: number; key: string }> {
  const created = await consoleOnA("keys", { method: "POST", json: { name: "revoked soon", accept_attribution: true } });
  expect(created.status).toBe(201);
  const { id, key } = created.body.data as { id: number; key: string };
  for (const instance of [a, b, c]) expect((await authTest(instance, key)).status).toBe(200);
  return { id, key };
}

/** The one request each instance gets right after a revocation returned: all refused with `message`. */
async function refusedEverywhere(key: string, message: string): Promise<void> {
  const answers = await Promise.all([b, c, a].map((instance) => authTest(instance, key)));
  expect(answers.map((r) => [r.status, r.body.message])).toEqual([
    [401, message],
    [401, message],
    [401, message],
  ]);
}

beforeAll(async () => {
  await withAdmin(admin, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
  });
  const setup = await createChatService({ database: url, env: {}, logLevel: "warn", renderWorker: false });
  try {
    ownerKey = (await setup.bootstrap({ organizationName: "Acme", email: "owner@acme.test" })).key.key;
  } finally {
    await setup.close();
  }
  [a, b, c] = await Promise.all([startInstance({ CHATSVC_RATE_LIMIT: "on" }), startInstance({ CHATSVC_RATE_LIMIT: "on" }), startInstance({ CHATSVC_RATE_LIMIT: "off" })]);
  const signIn = await request(`${a.url}/console/api/session`, { json: { api_key: ownerKey }, headers: { origin: a.url } });
  expect(signIn.status).toBe(200);
  consoleCookie = /chatsvc_console=([^;]*)/.exec(signIn.headers.get("set-cookie") ?? "")![1]!;
}, 90_000);

afterAll(async () => {
  for (const instance of [a, b, c]) instance?.child.kill("SIGKILL");
  await Promise.all([a, b, c].map((i) => i?.exited));
  await withAdmin(admin, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
});

describe("a key revoked through one instance or the CLI is refused by the next request to any instance", () => {
  it("disabled through A: refused at once by B (rate limits on) and C (off); enabled again: accepted at once", async () => {
    const { id, key } = await rememberedKey();
    // Several rounds: each answer right after the console's, well inside one poll of the change counters.
    for (let round = 0; round < 5; round++) {
      expect((await consoleOnA(`keys/${id}/disable`, { method: "POST" })).status).toBe(200);
      await refusedEverywhere(key, "API key is disabled");
      expect((await consoleOnA(`keys/${id}/enable`, { method: "POST" })).status).toBe(200);
      for (const instance of [b, c, a]) expect((await authTest(instance, key)).status).toBe(200);
    }
    // Other keys stay remembered and accepted.
    for (const instance of [b, c, a]) expect((await authTest(instance, ownerKey)).status).toBe(200);
  });

  it("regenerated through A: the old key is refused at once everywhere, the new one accepted", async () => {
    const { id, key } = await rememberedKey();
    const regenerated = await consoleOnA(`keys/${id}/regenerate`, { method: "POST" });
    expect(regenerated.status).toBe(200);
    await refusedEverywhere(key, "Invalid API key");
    for (const instance of [b, c, a]) expect((await authTest(instance, regenerated.body.data.key)).status).toBe(200);
  });

  it("deleted through A: refused at once everywhere", async () => {
    const { id, key } = await rememberedKey();
    expect((await consoleOnA(`keys/${id}`, { method: "DELETE" })).status).toBe(200);
    await refusedEverywhere(key, "Invalid API key");
  });

  it("disabled, regenerated and deleted with the CLI: refused at once by every instance", async () => {
    const cli = (args: string[]) => runCli(["--database-url", url, ...args], { env: quiet });

    const toDisable = await rememberedKey();
    expect((await cli(["keys", "disable", String(toDisable.id)])).code).toBe(0);
    await refusedEverywhere(toDisable.key, "API key is disabled");

    const toRegenerate = await rememberedKey();
    expect((await cli(["keys", "regenerate", String(toRegenerate.id)])).code).toBe(0);
    await refusedEverywhere(toRegenerate.key, "Invalid API key");

    const toDelete = await rememberedKey();
    expect((await cli(["keys", "delete", String(toDelete.id)])).code).toBe(0);
    await refusedEverywhere(toDelete.key, "Invalid API key");
  });

  it("a revoked key cannot sign in to the console of another instance", async () => {
    const { id, key } = await rememberedKey();
    expect((await consoleOnA(`keys/${id}/disable`, { method: "POST" })).status).toBe(200);
    const signIn = await request(`${b.url}/console/api/session`, { json: { api_key: key }, headers: { origin: b.url } });
    expect([signIn.status, signIn.body.message]).toEqual([401, "API key is disabled"]);
  });
});
