import { afterEach, expect, it } from "vitest";
import { request, startHarness, type Harness } from "../support/harness.js";
import { sqliteOf } from "../support/sqlite.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const health = async () => (await request(`${h.server.url}/healthz`)).status;

/** Polls /healthz until it answers `status`: the probe runs at most once a second, so a change shows within about that. */
async function healthBecomes(status: number): Promise<void> {
  const until = Date.now() + 5_000;
  let last = 0;
  while ((last = await health()) !== status) {
    if (Date.now() > until) throw new Error(`/healthz stayed ${last}, expected ${status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

it("/healthz answers 503 while the database is full and every growing write fails, and 200 once it can grow again", async () => {
  h = await startHarness();
  const sqlite = sqliteOf(h.service);
  expect(await health()).toBe(200);
  // As full as the database may get: no free pages left, and no more pages allowed (what a full disk does to it).
  sqlite.exec("VACUUM");
  sqlite.pragma(`max_page_count = ${sqlite.pragma("page_count", { simple: true })}`);
  const write = await h.call("/chatbots/demo/conversations", { json: { metadata: { note: "x".repeat(8_000) } } });
  expect(write.status).toBe(500);
  await healthBecomes(503);
  expect((await request(`${h.server.url}/healthz`)).body).toEqual({ success: false, message: "Service unavailable" });

  sqlite.pragma("max_page_count = 1073741823");
  await healthBecomes(200);
  expect((await h.call("/chatbots/demo/conversations", { json: { metadata: { note: "x".repeat(8_000) } } })).status).toBe(201);
});

it("/healthz answers 503 while the database refuses writes (read-only), and 200 once it takes them again", async () => {
  h = await startHarness();
  const sqlite = sqliteOf(h.service);
  expect(await health()).toBe(200);
  sqlite.pragma("query_only = 1");
  expect((await h.call("/chatbots/demo/conversations", { json: {} })).status).toBe(500);
  await healthBecomes(503);
  sqlite.pragma("query_only = 0");
  await healthBecomes(200);
});

it("probes with at most one write a second, however many health checks arrive", async () => {
  h = await startHarness();
  const sqlite = sqliteOf(h.service);
  const changes = () => (sqlite.prepare("SELECT total_changes() AS n").get() as { n: number }).n;
  const before = changes();
  const started = Date.now();
  for (let round = 0; round < 4; round++) {
    const answers = await Promise.all(Array.from({ length: 25 }, health));
    expect(answers.every((s) => s === 200)).toBe(true);
  }
  const seconds = Math.ceil((Date.now() - started) / 1000);
  // Each probe is one transaction of two row writes; 100 checks within `seconds` may start at most seconds + 1 probes.
  expect(changes() - before).toBeLessThanOrEqual(2 * (seconds + 1));
});
