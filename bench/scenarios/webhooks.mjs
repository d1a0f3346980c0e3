import { createServer } from "node:http";
import { api, startChatsvc } from "../lib/chatsvc.mjs";
import { load } from "../lib/load.mjs";
import { createRandom } from "../lib/prng.mjs";
import { row, unavailable } from "../lib/table.mjs";

/** Longest a paused receiver holds an answer: well under the 10 s attempt timeout, so nothing times out. */
const HOLD_MS = 4_000;

/**
 * A webhook receiver on 127.0.0.1 recording each attempt; `failRate` answers
 * that share with 500s, at (seeded) random. While paused it answers slowly
 * (after up to HOLD_MS), so events pile up in the service's outbox.
 */
async function startReceiver({ failRate = 0, seed = 1, paused = false } = {}) {
  const rand = createRandom(seed);
  const attempts = new Map(); // webhook-id -> {tries, ok}
  const held = new Set();
  let first = 0;
  let last = 0;
  let received = 0;
  let releasedAt = paused ? Infinity : 0;
  let afterRelease = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const id = req.headers["webhook-id"];
      const answer = () => {
        held.delete(answer);
        const now = performance.now();
        first ||= now;
        last = now;
        received++;
        if (now >= releasedAt) afterRelease++;
        const entry = attempts.get(id) ?? { tries: 0, ok: 0 };
        entry.tries++;
        const fail = rand() < failRate;
        if (!fail) entry.ok++;
        attempts.set(id, entry);
        res.writeHead(fail ? 500 : 204).end();
      };
      if (performance.now() >= releasedAt) return answer();
      held.add(answer);
      setTimeout(() => held.has(answer) && answer(), HOLD_MS);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    attempts,
    stats: () => ({ first, last, received, afterRelease, releasedAt, unique: attempts.size, delivered: [...attempts.values()].filter((a) => a.ok > 0).length }),
    /** Answers every held request now and all later ones at once. */
    release() {
      releasedAt = performance.now();
      for (const answer of [...held]) answer();
    },
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  };
}

const until = async (done, timeoutMs) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
};

/** Fires `events` conversation_started events through the API with 10 connections; returns when the last was accepted. */
async function fireEvents(server, events) {
  const started = performance.now();
  const r = await load({
    url: `${server.api}/chatbots/kb/conversations`,
    connections: 10,
    amount: events,
    method: "POST",
    headers: server.headers,
    body: JSON.stringify({ visitor_id: "bench" }),
  });
  return { ...r, started, ended: r.lastAt, accepted: r.total - r.non2xx - r.errors - r.timeouts };
}

/**
 * `chatsvc serve` on a copy of `prepared` (SQLite or PostgreSQL) with one webhook to a receiver of its own:
 * `events` fired over HTTP, then every accepted one awaited at the receiver. With `backlog`, the receiver
 * holds its answers until all were fired, so deliveries queue first.
 */
async function fireAndDeliver(ctx, prepared, env, events, { backlog = false } = {}) {
  const receiver = await startReceiver({ paused: backlog });
  const server = await startChatsvc(prepared, { env, args: ["--allow-private-webhooks"], nodeArgs: ctx.nodeArgs });
  try {
    await api(server, "/webhooks", { method: "POST", json: { url: receiver.url, events: ["conversation_started"] } });
    const fired = await fireEvents(server, events);
    if (backlog) receiver.release();
    const settled = await until(() => receiver.stats().delivered >= fired.accepted, 120_000);
    const s = receiver.stats();
    const lost = fired.accepted - s.delivered;
    const common = `${lost} lost, ${s.received - s.unique} duplicate attempts${settled ? "" : ", NOT SETTLED in 120 s"}`;
    return { fired, receiver: s, settled, lost, common };
  } finally {
    await server.stop();
    await receiver.close();
  }
}

/** Events delivered per second, from the first fired to the last delivered. */
const endToEndRate = ({ fired, receiver }) => receiver.delivered / ((receiver.last - fired.started) / 1000);

/** Queued deliveries sent per second once the receiver was released. */
const drainRate = (receiver) => receiver.afterRelease / ((receiver.last - receiver.releasedAt) / 1000);

/** Scenario 6: webhook delivery throughput with keep-alive, and exactly-one outcome per event with a flaky receiver. */
export async function run(ctx) {
  const kb = await ctx.knowledgeBase(ctx.sizes.send[0]);
  const rows = [];
  const env = { CHATSVC_WEBHOOK_RETRY_DELAYS: "20,50,100" };

  // 1. Throughput to a healthy receiver: end to end while events are created,
  // then draining a backlog (events queued while the receiver was slow).
  const events = ctx.quick ? 1_500 : 10_000;
  for (const backlog of [false, true]) {
    const measured = await fireAndDeliver(ctx, kb, env, events, { backlog });
    const { fired, receiver: s, lost, common } = measured;
    ctx.details[backlog ? "webhooksBacklog" : "webhooks"] = measured;
    if (!backlog) {
      const rate = endToEndRate(measured);
      rows.push(
        row({
          id: "6",
          figure: `webhooks end to end: ${fired.accepted.toLocaleString("en-US")} events created over HTTP (10 conn) and delivered`,
          value: rate,
          unit: "events/s",
          baseline: { label: "events created/s", value: fired.rps },
          baselineUnit: "/s",
          // Issue 19 (issue 7 asked for 1,500/s).
          target: ">= 2,500/s, none lost",
          pass: rate >= 2500 && lost === 0 && fired.accepted === events,
          note: `${common}; last delivery ${Math.max(0, (s.last - fired.ended) / 1000).toFixed(2)} s after the last event was accepted`,
        }),
      );
    } else {
      const rate = drainRate(s);
      rows.push(
        row({
          id: "6",
          figure: `webhooks backlog drain: ${s.afterRelease.toLocaleString("en-US")} queued deliveries, keep-alive`,
          value: rate,
          unit: "events/s",
          target: ">= 1,500/s, none lost",
          pass: rate >= 1500 && lost === 0 && fired.accepted === events,
          note: common,
        }),
      );
    }
  }

  rows.push(await postgresEndToEnd(ctx, events, env, ctx.details.webhooks));
  rows.push(await postgresDrain(ctx, events, env, ctx.details.webhooksBacklog));

  // 2. A receiver failing 30% of attempts: every event ends delivered or counted failed, once.
  const flakyEvents = ctx.quick ? 600 : 10_000;
  const receiver = await startReceiver({ failRate: 0.3, seed: ctx.seed });
  const server = await startChatsvc(kb, { env, args: ["--allow-private-webhooks"], nodeArgs: ctx.nodeArgs });
  try {
    const { data: hook } = await api(server, "/webhooks", { method: "POST", json: { url: receiver.url, events: ["conversation_started"] } });
    const fired = await fireEvents(server, flakyEvents);
    const webhook = async () => (await api(server, "/webhooks")).data.find((w) => w.id === hook.id);
    let record;
    // Settled when every event was either delivered or counted failed (and retries stopped).
    const settled = await until(async () => {
      record = await webhook();
      return receiver.stats().delivered + record.failed_triggers >= fired.accepted;
    }, 180_000);
    await new Promise((resolve) => setTimeout(resolve, 500)); // a late extra attempt would show up now
    record = await webhook();
    const s = receiver.stats();
    const values = [...receiver.attempts.values()];
    const doubleDelivered = values.filter((a) => a.ok > 1).length;
    const overBudget = values.filter((a) => a.tries > 4).length;
    const failedByReceiver = values.filter((a) => a.ok === 0).length;
    const exact = settled && s.delivered + record.failed_triggers === fired.accepted && failedByReceiver === record.failed_triggers && doubleDelivered === 0 && overBudget === 0;
    ctx.details.webhooksFlaky = { fired, receiver: s, record, doubleDelivered, overBudget, failedByReceiver, settled };
    rows.push(
      row({
        id: "6",
        figure: `30% failing receiver, ${fired.accepted.toLocaleString("en-US")} events: delivered + counted failed`,
        value: s.delivered + record.failed_triggers,
        unit: "events",
        target: "= events, each once",
        pass: exact && fired.accepted === flakyEvents,
        note: `${s.delivered} delivered, ${record.failed_triggers} counted failed (${failedByReceiver} never got a 2xx), total_triggers ${record.total_triggers}, ${s.received} attempts, ${doubleDelivered} delivered twice, ${overBudget} over 4 attempts`,
      }),
    );
  } finally {
    await server.stop();
    await receiver.close();
  }
  return rows;
}

/** End to end as on SQLite (events created over HTTP and delivered at once), one `chatsvc serve` on PostgreSQL. */
async function postgresEndToEnd(ctx, events, env, sqlite) {
  const figure = "PostgreSQL: webhooks end to end, 1 instance";
  if (ctx.postgresUnavailable) return unavailable("6", figure, `skipped: ${ctx.postgresUnavailable}`, "none lost");
  const measured = await fireAndDeliver(ctx, await ctx.postgresKnowledgeBase(ctx.sizes.send[0]), env, events);
  const { fired, lost, common } = measured;
  ctx.details.webhooksPostgres = measured;
  const rate = endToEndRate(measured);
  const sqliteRate = sqlite ? endToEndRate(sqlite) : null;
  return row({
    id: "6",
    figure: `${figure}: ${fired.accepted.toLocaleString("en-US")} events created over HTTP (10 conn) and delivered`,
    value: rate,
    unit: "events/s",
    ...(sqliteRate && { baseline: { label: "SQLite", value: sqliteRate }, baselineUnit: "events/s", ratio: rate / sqliteRate }),
    target: "none lost",
    pass: lost === 0 && fired.accepted === events,
    note: `${common}; events created ${Math.round(fired.rps)}/s`,
  });
}

/**
 * PostgreSQL: two `chatsvc serve` on one database, each creating half the
 * events while the receiver is slow, then the backlog drained by whichever
 * instances claim it (against SQLite's one-process drain above).
 */
async function postgresDrain(ctx, events, env, sqlite) {
  const figure = "PostgreSQL: webhooks backlog drain across 2 instances on one database";
  if (ctx.postgresUnavailable) return unavailable("6", figure, `skipped: ${ctx.postgresUnavailable}`, ">= 1,000/s, none lost");
  const kb = await ctx.postgresKnowledgeBase(ctx.sizes.send[0]);
  const receiver = await startReceiver({ paused: true });
  const args = ["--allow-private-webhooks"];
  const first = await startChatsvc(kb, { env, args, nodeArgs: ctx.nodeArgs });
  let second;
  try {
    second = await startChatsvc(kb, { env, args, nodeArgs: ctx.nodeArgs, database: first.database });
    await api(first, "/webhooks", { method: "POST", json: { url: receiver.url, events: ["conversation_started"] } });
    const fired = await Promise.all([fireEvents(first, events / 2), fireEvents(second, events / 2)]);
    const accepted = fired.reduce((a, f) => a + f.accepted, 0);
    receiver.release();
    const settled = await until(() => receiver.stats().delivered >= accepted, 120_000);
    const s = receiver.stats();
    const lost = accepted - s.delivered;
    const duplicates = s.received - s.unique;
    const rate = drainRate(s);
    const sqliteRate = sqlite ? drainRate(sqlite.receiver) : null;
    ctx.details.webhooksBacklogPostgres = { fired, receiver: s, settled };
    return row({
      id: "6",
      figure: `${figure}: ${s.afterRelease.toLocaleString("en-US")} queued deliveries`,
      value: rate,
      unit: "events/s",
      ...(sqliteRate && { baseline: { label: "SQLite, 1 process", value: sqliteRate }, baselineUnit: "events/s", ratio: rate / sqliteRate }),
      target: ">= 1,000/s, none lost",
      pass: rate >= 1000 && lost === 0 && accepted === events,
      note: `${lost} lost, ${duplicates} duplicate attempts${settled ? "" : ", NOT SETTLED in 120 s"}; events created ${Math.round(fired.reduce((a, f) => a + f.rps, 0))}/s over both instances`,
    });
  } finally {
    await second?.stop();
    await first.stop();
    await receiver.close();
  }
}
