import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../src/index.js";
import { createChatService } from "../../src/service.js";
import { runCli, startServe, type CliResult, type ServeProcess } from "../support/cli.js";
import { request, tempDir, type ApiResponse } from "../support/harness.js";
import { databaseUrl, testDatabaseUrl, withAdmin } from "../support/postgres.js";
import { eventually, startReceiver, type Received, type Receiver } from "../webhooks/support/receiver.js";

/*
 * Three real `chatsvc serve` processes on one PostgreSQL database, requests
 * spread round-robin. The processes are shared by every test here (starting
 * them is most of the cost); the test that kills one runs last.
 */

const admin = testDatabaseUrl();
const name = `scale_instances_${process.pid}`;
const url = databaseUrl(admin, name);
const { dir, cleanup } = tempDir();
/**
 * Rate limits would refuse the bursts below before credits do: they have tests of their own. The short webhook
 * timeout shortens the lease a killed instance's deliveries keep before the others take them over.
 */
const env = { CHATSVC_RATE_LIMIT: "off", CHATSVC_LOG_LEVEL: "warn", CHATSVC_WEBHOOK_RETRY_DELAYS: "50,50,50", CHATSVC_WEBHOOK_TIMEOUT_MS: "2000" };

interface Instance extends ServeProcess {
  alive: boolean;
}

let instances: Instance[] = [];
let db: pg.Pool;
let receiver: Receiver;
let demoKey: string;
let metered: { orgId: number; key: string };
let toDisable: { id: number; key: string };
let turn = 0;

function cli(args: string[]): Promise<CliResult> {
  return runCli(["--database-url", url, ...args], { env });
}

async function cliJson(args: string[]): Promise<any> {
  const res = await cli([...args, "--json"]);
  if (res.code !== 0) throw new Error(`chatsvc ${args.join(" ")} failed: ${res.stderr}`);
  return res.json();
}

async function startInstance(): Promise<Instance> {
  return { ...(await startServe(["--database-url", url], ["--allow-private-webhooks"], env)), alive: true };
}

/** The next live instance, round-robin. */
function next(): Instance {
  const alive = instances.filter((i) => i.alive);
  return alive[turn++ % alive.length]!;
}

function call(instance: Instance, path: string, key: string, init: RequestInit & { json?: unknown } = {}): Promise<ApiResponse> {
  return request(`${instance.url}/api/v1${path}`, { ...init, key });
}

/**
 * When the request that first showed `seen` was sent, or undefined: "seen by every instance within a second"
 * is about when a request finds the change, not how long a chat turn then takes on a busy machine.
 */
async function sentWhen(send: () => Promise<ApiResponse>, seen: (res: ApiResponse) => boolean): Promise<number | undefined> {
  const sent = performance.now();
  return seen(await send()) ? sent : undefined;
}

/** Runs `tasks` with at most `width` in flight. */
async function inParallel<T>(count: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let started = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (started < count) {
        const i = started++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

async function openConversations(count: number, slug: string, key: string): Promise<number[]> {
  return inParallel(count, 4, async () => {
    const res = await call(next(), `/chatbots/${slug}/conversations`, key, { json: {} });
    expect(res.status).toBe(201);
    return res.body.data.conversation_id as number;
  });
}

beforeAll(async () => {
  await withAdmin(admin, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${name}"`);
  });
  // Set up in-process (quicker than a CLI run per record), closed before the instances start.
  const setup = await createChatService({ database: url, env: {}, logLevel: "warn", renderWorker: false });
  try {
    demoKey = (await setup.bootstrap({ organizationName: "Acme", email: "owner@acme.test" })).key.key;
    const org = await setup.orgs.create({ name: "Metered", credits_monthly: 100 });
    const user = await setup.users.create({ organization_id: org.id, email: "owner@metered.test" });
    await setup.chatbots.create({ organization_id: org.id, slug: "metered", name: "Metered" });
    metered = { orgId: org.id, key: (await setup.keys.create({ user_id: user.id, name: "burst", accept_attribution: true })).key };
    await setup.chatbots.create({ organization_id: org.id, slug: "seasonal", name: "Seasonal" });
    toDisable = await setup.keys.create({ email: "owner@acme.test", name: "to-disable", accept_attribution: true });
  } finally {
    await setup.close();
  }
  // Slow enough answers that every instance has deliveries in flight when one dies.
  receiver = await startReceiver(() => ({ delayMs: 200 }));
  // Started together: the advisory lock makes one of them migrate (init already did) and the others wait.
  instances = await Promise.all([startInstance(), startInstance(), startInstance()]);
  // A first answer loads the chatbot's knowledge and starts the renderer: that start-up is not what the tests measure.
  const [warmUp] = await openConversations(1, "demo", demoKey);
  await Promise.all(instances.map((i) => call(i, `/chatbots/demo/conversations/${warmUp}/messages`, demoKey, { json: { message: "Hello?" } })));
  db = new pg.Pool({ connectionString: url, max: 2 });
  db.on("error", () => {}); // idle connections cut when the database is dropped
}, 90_000);

afterAll(async () => {
  for (const instance of instances) instance.child.kill("SIGKILL");
  await Promise.all(instances.map((i) => i.exited));
  await db?.end();
  await receiver?.close();
  await withAdmin(admin, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  cleanup();
});

describe("three chatsvc serve instances on one PostgreSQL database", () => {
  it("a key disabled with `chatsvc keys disable` is refused by every instance within 1 s", async () => {
    const issued = toDisable;
    // Every instance has verified (and cached) the key before it is disabled.
    for (const instance of instances) expect((await call(instance, "/auth/test", issued.key)).status).toBe(200);

    const disabled = await cli(["keys", "disable", String(issued.id)]);
    expect(disabled.code).toBe(0);
    const since = performance.now();
    await Promise.all(
      instances.map((instance) =>
        eventually(async () => {
          const res = await call(instance, "/auth/test", issued.key);
          return res.status === 401 && res.body.message === "API key is disabled";
        }, 1_000),
      ),
    );
    expect(performance.now() - since).toBeLessThan(1_000);
    // The other keys are untouched.
    for (const instance of instances) expect((await call(instance, "/auth/test", demoKey)).status).toBe(200);
  });

  it("a chatbot taken offline with `chatsvc bots update --inactive` is refused by every instance within 1 s, and back within 1 s", async () => {
    const open = (instance: Instance) => call(instance, "/chatbots/seasonal/conversations", metered.key, { json: {} });
    // Every instance has resolved (and remembered) the chatbot before it changes.
    for (const instance of instances) expect((await open(instance)).status).toBe(201);
    for (const [flag, accepted] of [["--inactive", (res: ApiResponse) => res.status === 403 && res.body.message === "Chatbot is not active"], ["--active", (res: ApiResponse) => res.status === 201]] as const) {
      expect((await cli(["bots", "update", "seasonal", flag])).code).toBe(0);
      const since = performance.now();
      const seenAt = await Promise.all(instances.map((instance) => eventually(async () => sentWhen(() => open(instance), accepted), 1_000)));
      for (const at of seenAt) expect(at - since).toBeLessThan(1_000);
    }
  });

  it("a document ingested on the shared database is found by every instance within 1 s", async () => {
    const [conversation] = await openConversations(1, "demo", demoKey);
    const ask = (instance: Instance) => call(instance, `/chatbots/demo/conversations/${conversation}/messages`, demoKey, { json: { message: "How long is the Quokkatron warranty?" } });
    // Every instance has the demo bot's knowledge loaded before the new document arrives.
    for (const answer of await Promise.all(instances.map(ask))) expect(answer.body.data.sources.map((s: { name: string }) => s.name)).not.toContain("warranty.md");

    const file = join(dir, "warranty.md");
    writeFileSync(file, "# Warranty\n\nThe Quokkatron warranty lasts seventeen years and covers the flux coil.\n");
    const ingested = await cli(["ingest", "demo", file]);
    expect(ingested.code).toBe(0);
    const since = performance.now();
    const seenAt = await Promise.all(
      instances.map((instance) =>
        eventually(() => sentWhen(() => ask(instance), (res) => res.status === 200 && res.body.data.sources.some((s: { name: string }) => s.name === "warranty.md")), 1_000),
      ),
    );
    for (const at of seenAt) expect(at - since).toBeLessThan(1_000);
  });

  it("300 sends with 100 credits left give exactly 100 answers and 200 credit 429s; credits end at 0", async () => {
    const { orgId, key } = metered;
    const conversations = await openConversations(10, "metered", key);

    const answers = await inParallel(300, 24, (i) =>
      call(next(), `/chatbots/metered/conversations/${conversations[i % conversations.length]}/messages`, key, { json: { message: `Question ${i}?` } }),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(200);
    for (const refused of answers.filter((a) => a.status === 429)) expect(refused.body.message).toBe("Monthly credit limit reached");
    expect(Math.min(...answers.filter((a) => a.status === 200).map((a) => a.body.meta.credits_remaining))).toBe(0);

    expect(await cliJson(["credits", "show", "--org", String(orgId)])).toMatchObject({ credits_used: 100, credits_max: 100, credits_remaining: 0 });
    // Nothing stored for a refused message: 100 questions, 100 replies.
    const { rows } = await db.query<{ role: string; n: number }>(
      "SELECT m.role, count(*)::int AS n FROM messages m JOIN conversations c ON c.id = m.conversation_id JOIN chatbots b ON b.id = c.chatbot_id WHERE b.slug = 'metered' GROUP BY m.role ORDER BY m.role",
    );
    expect(rows).toEqual([
      { role: "assistant", n: 100 },
      { role: "user", n: 100 },
    ]);
  }, 60_000);

  it("an instance SIGKILLed during a 200-event burst loses no delivery; only attempts it cut off repeat, with the same webhook-id", async () => {
    const hook = (await call(instances[0]!, "/webhooks", demoKey, { json: { url: `${receiver.url}/burst`, events: ["message_received"] } })).body.data;
    const conversations = await openConversations(20, "demo", demoKey);
    const victim = instances[2]!;
    let answered = 0;
    let killedAt = Infinity;
    await inParallel(200, 12, async (i) => {
      for (;;) {
        const instance = next();
        if (answered === 100 && victim.alive) {
          victim.alive = false;
          killedAt = Date.now();
          victim.child.kill("SIGKILL");
        }
        // A send cut off by the kill may or may not have been stored; either way it is sent again elsewhere.
        const res = await call(instance, `/chatbots/demo/conversations/${conversations[i % conversations.length]}/messages`, demoKey, {
          json: { message: `How do I create an API key? (${i})` },
        }).catch(() => undefined);
        if (res?.status === 200) {
          answered++;
          return;
        }
        if (res) throw new Error(`send failed: ${res.status} ${res.text}`);
      }
    });
    expect(await victim.exited).toBe(null);

    // Every event of the burst in the outbox reaches the receiver; the killed instance's leases run out and others take its rows.
    const { rows: events } = await db.query<{ message_id: string }>("SELECT message_id FROM webhook_deliveries WHERE webhook_id = $1", [hook.id]);
    expect(events.length).toBeGreaterThanOrEqual(200);
    const burst = () => receiver.received.filter((r) => r.path === "/burst");
    const expected = new Set(events.map((e) => e.message_id));
    // Waits for the lease the dead instance held (the delivery timeout plus a margin) to run out.
    await eventually(async () => (await db.query("SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1 AND status <> 'delivered'", [hook.id])).rowCount === 0, 30_000, 100);

    const byId = new Map<string, Received[]>();
    for (const r of burst()) byId.set(r.headers["webhook-id"] as string, [...(byId.get(r.headers["webhook-id"] as string) ?? []), r]);
    expect([...byId.keys()].sort()).toEqual([...expected].sort());
    for (const [, attempts] of byId) for (const attempt of attempts) expect(verifyWebhook(hook.secret, attempt.headers, attempt.body)).toBe(true);
    // Only attempts the dead instance had made (received, but never recorded as answered) come again, once, after
    // its lease ran out, as the same event. A healthy cluster never sends an attempt twice.
    const repeated = [...byId.values()].filter((attempts) => attempts.length > 1);
    for (const attempts of repeated) {
      expect(attempts).toHaveLength(2);
      // Slack for requests the dead instance had sent that this process read just after the kill.
      expect(attempts[0]!.at).toBeLessThanOrEqual(killedAt + 250);
      expect(attempts[1]!.body).toBe(attempts[0]!.body);
    }
    // At most the dead instance's deliveries in flight (its worker's concurrency) repeat.
    expect(repeated.length).toBeLessThanOrEqual(8);

    // No conversation is half-stored: every question has its reply.
    const { rows: halfStored } = await db.query(
      `SELECT c.id FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id WHERE b.slug = 'demo'
         AND (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id AND m.role = 'user')
          <> (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id AND m.role = 'assistant' AND NOT m.regenerated)`,
    );
    expect(halfStored).toEqual([]);
  }, 90_000);
});
