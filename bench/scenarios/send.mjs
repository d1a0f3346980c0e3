import { startChatsvc } from "../lib/chatsvc.mjs";
import { openConversations, rotatingPosts } from "../lib/conversations.mjs";
import { createCorpus, createQueries } from "../lib/dataset.mjs";
import { load, send } from "../lib/load.mjs";
import { sampleRss } from "../lib/proc.mjs";
import { summarize } from "../lib/stats.mjs";
import { row } from "../lib/table.mjs";

const TARGET_P50 = { 10_000: 15, 100_000: 40 };

/** Scenario 3: send-message with the extractive model: single-visitor latency, and throughput with 10 connections. */
export async function run(ctx) {
  const rows = [];
  const corpus = createCorpus(ctx.seed);
  for (const [index, size] of ctx.sizes.send.entries()) {
    const kb = await ctx.knowledgeBase(size);
    const questions = createQueries(corpus, { seed: ctx.seed + 1, count: 500, documents: kb.documents });
    const server = await startChatsvc(kb, { nodeArgs: ctx.nodeArgs });
    try {
      const ids = await openConversations(server, 200);
      const path = (id) => `/api/v1/chatbots/kb/conversations/${id}/messages`;
      const post = (n) =>
        send(server.url + path(ids[n % ids.length]), { method: "POST", headers: server.headers, body: JSON.stringify({ message: questions[n % questions.length] }) });

      // Latency: one visitor at a time, after a warm-up that loads the renderer and the caches.
      for (let n = 0; n < 30; n++) await post(n);
      const samples = [];
      let failed = 0;
      let cannot = 0;
      const count = ctx.quick ? 100 : 300;
      for (let n = 0; n < count; n++) {
        const r = await post(1000 + n);
        if (r.status !== 200) failed++;
        else if (JSON.parse(r.body).data.cannot_answer) cannot++;
        samples.push(r.ms);
      }
      const latency = summarize(samples);
      const label = `${Math.round(kb.chunks / 1000)}k chunks`;
      ctx.details[`send_${size}`] = { latency, failed, cannotAnswer: cannot / count };
      const target = TARGET_P50[size];
      rows.push(
        row({
          id: "3",
          figure: `send-message p50, extractive, 1 conn, ${label}`,
          value: latency.p50,
          unit: "ms",
          target: target ? `< ${target} ms` : "(no target)",
          pass: target ? latency.p50 < target && failed === 0 : null,
          note: `p99 ${latency.p99.toFixed(1)} ms; ${Math.round((100 * cannot) / count)}% cannot_answer${failed ? `; ${failed} failed` : ""}`,
        }),
      );

      if (index === 0) {
        const sampler = sampleRss(server.pid);
        const bodies = questions.map((message) => ({ message }));
        const r = await load({
          url: server.url + path(ids[0]),
          connections: 10,
          durationS: ctx.quick ? 4 : 10,
          method: "POST",
          headers: server.headers,
          requests: rotatingPosts(path, ids, bodies),
        });
        const rss = sampler.stop();
        ctx.noteLoadRss("send-message, 10 conn", rss.max);
        ctx.details[`send_${size}`].throughput = r;
        const bad = r.non2xx + r.errors + r.timeouts;
        rows.push(
          row({
            id: "3",
            figure: `send-message throughput, 10 conn, ${label}`,
            value: r.rps,
            unit: "msg/s",
            target: ">= 300 msg/s",
            pass: r.rps >= 300 && bad === 0,
            note: `p50 ${r.p50} ms, p99 ${r.p99} ms under load${bad ? `; ${bad} failed` : ""}`,
          }),
        );
      }
    } finally {
      await server.stop();
    }
  }
  return rows;
}
