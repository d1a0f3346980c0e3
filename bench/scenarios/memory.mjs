import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { BENCH_DIST } from "../lib/build.mjs";
import { startChatsvc } from "../lib/chatsvc.mjs";
import { openConversations } from "../lib/conversations.mjs";
import { send } from "../lib/load.mjs";
import { rssOf } from "../lib/proc.mjs";
import { percentile } from "../lib/stats.mjs";
import { row } from "../lib/table.mjs";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Scenario 7: `chatsvc serve` idle RSS, peak RSS under the load scenarios, `chatsvc --help` time. */
export async function run(ctx) {
  const kb = await ctx.knowledgeBase(ctx.sizes.send[0]);
  const server = await startChatsvc(kb, { nodeArgs: ctx.nodeArgs });
  let fresh;
  let warm;
  let settled = null;
  let settledFile = null;
  try {
    await sleep(2000);
    fresh = rssOf(server.pid);
    // A server that has answered once has loaded what it keeps loaded (renderer, statements).
    const [id] = await openConversations(server, 1);
    await send(`${server.api}/chatbots/kb/conversations/${id}/messages`, { method: "POST", headers: server.headers, body: JSON.stringify({ message: "How do I use the api key?" }) });
    await sleep(2000);
    warm = rssOf(server.pid);
    // The render worker (jsdom) stops after renderIdleMs (default 30 s) without replies; an idle
    // server is one past that point. The quick run skips the wait.
    if (!ctx.quick) {
      await sleep(32_000);
      settled = rssOf(server.pid);
      settledFile = rssOf(server.pid, "RssFile");
    }
  } finally {
    await server.stop();
  }

  const times = [];
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    const r = spawnSync(process.execPath, [join(BENCH_DIST, "cli.js"), "--help"], { encoding: "utf8" });
    times.push(performance.now() - t);
    if (r.status !== 0) throw new Error(`chatsvc --help failed: ${r.stderr}`);
  }
  const node = [];
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    spawnSync(process.execPath, ["-e", "0"]);
    node.push(performance.now() - t);
  }
  const help = percentile(times, 50);
  const peak = Math.max(0, ...Object.values(ctx.loadRss));
  ctx.details.memory = { fresh, warm, loadRss: ctx.loadRss, helpMs: times, nodeMs: node };
  return [
    row({ id: "7", figure: "chatsvc serve RSS 2 s after one answered message (render worker warm)", value: warm, unit: "MB", note: `${fresh.toFixed(0)} MB before any request; ${kb.chunks.toLocaleString("en-US")}-chunk database` }),
    settled === null
      ? row({ id: "7", figure: "chatsvc serve idle RSS (30 s without replies)", value: null, note: "n/a: the quick run does not wait for the render worker's idle timeout" })
      : row({ id: "7", figure: "chatsvc serve idle RSS (30 s without replies)", value: settled, unit: "MB", target: "< 150 MB", pass: settled < 150, note: `render worker stopped after its idle timeout; ${settledFile.toFixed(0)} MB of it file-backed (the memory-mapped database and code; the kernel reclaims it under pressure)` }),
    Object.keys(ctx.loadRss).length === 0
      ? row({ id: "7", figure: "chatsvc serve peak RSS under load", value: null, note: "n/a: no load scenario ran in this run" })
      : row({
          id: "7",
          figure: "chatsvc serve peak RSS under load",
          value: peak,
          unit: "MB",
          target: "< 400 MB",
          pass: peak < 400,
          note: Object.entries(ctx.loadRss).map(([k, v]) => `${k}: ${v.toFixed(0)} MB`).join("; "),
        }),
    row({ id: "7", figure: "chatsvc --help wall time (median of 7)", value: help, unit: "ms", baseline: { label: "node -e 0", value: percentile(node, 50) }, baselineUnit: "ms", target: "< 400 ms", pass: help < 400 }),
  ];
}
