import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { BENCH_DIST } from "../lib/build.mjs";
import { launch } from "../lib/proc.mjs";
import { percentile, timeCalls } from "../lib/stats.mjs";
import { row } from "../lib/table.mjs";

// Issue 18: console pages load in under 300 ms on this machine with 10k conversations.
const TARGET_MS = 300;
const CONVERSATIONS = 10_000;
const WORDS = ["pricing", "install", "refund", "invoice", "webhook", "widget", "export", "password", "upgrade", "support"];

/**
 * 10k conversations of the `demo` chatbot, four messages each (two turns), a third of the
 * replies rated, written straight into the SQLite file (the product's own triggers keep their counters).
 */
function seed(file) {
  const db = new Database(file);
  const bot = db.prepare("SELECT id FROM chatbots WHERE slug = 'demo'").pluck().get();
  const conversation = db.prepare("INSERT INTO conversations (chatbot_id, session_id, visitor_id, visitor_name, source, started_at, last_message_at) VALUES (?, ?, ?, ?, 'widget', ?, ?) RETURNING id").pluck();
  const message = db.prepare("INSERT INTO messages (conversation_id, role, content, sources, rating, created_at) VALUES (?, ?, ?, '[]', ?, ?)");
  const start = Date.now() - 60 * 86_400_000;
  db.transaction(() => {
    for (let i = 0; i < CONVERSATIONS; i++) {
      const at = new Date(start + i * 500_000).toISOString();
      const id = conversation.get(bot, `bench-console-${i}`, `v${i}`, i % 3 === 0 ? `Visitor ${i}` : null, at, at);
      for (let turn = 0; turn < 2; turn++) {
        const word = WORDS[(i + turn) % WORDS.length];
        message.run(id, "user", `Question ${i}.${turn} about ${word} and the account`, null, at);
        message.run(id, "assistant", `<p>Answer ${i}.${turn}: see the ${word} page for details.</p>`, i % 3 === 1 ? (i % 2 ? "good" : "bad") : null, at);
      }
    }
  })();
  db.close();
}

const cli = (...args) => execFileSync(process.execPath, [join(BENCH_DIST, "cli.js"), ...args], { encoding: "utf8", env: { ...process.env, NODE_ENV: "production" } });

/** Scenario 11: the console's pages at 10k conversations, as the browser loads them (the page's API calls in parallel, session cookie). */
export async function run(ctx) {
  const dir = mkdtempSync(join(tmpdir(), "chatsvc-bench-console-"));
  const db = join(dir, "chatsvc.db");
  let server;
  try {
    const { email } = JSON.parse(cli("--db", db, "init", "--json")).user;
    seed(db);
    server = await launch(process.execPath, [...ctx.nodeArgs, join(BENCH_DIST, "cli.js"), "serve", "--port", "0", "--db", db], {
      ready: /listening on (http:\/\/\S+)/,
      env: { NODE_ENV: "production", CHATSVC_RATE_LIMIT_PER_KEY: "1000000000", CHATSVC_RATE_LIMIT_PER_IP: "1000000000" },
      cwd: dir,
    });
    const origin = server.match[1];
    const link = JSON.parse(cli("--db", db, "console-link", "--email", email, "--url", origin, "--json"));
    const signIn = await fetch(`${origin}/console/api/session`, { method: "POST", headers: { origin, "content-type": "application/json" }, body: JSON.stringify({ token: link.url.split("/").pop() }) });
    const cookie = /chatsvc_console=[^;]*/.exec(signIn.headers.get("set-cookie") ?? "")?.[0];
    if (!cookie) throw new Error(`console sign-in failed: HTTP ${signIn.status}`);
    const get = async (path) => {
      const res = await fetch(`${origin}/console/${path}`, { headers: { cookie } });
      if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
      return res.json();
    };
    const { data: firstPage } = await get("api/v1/conversations?per_page=25");
    const pages = [
      ["Conversations (first page of 25)", ["api/session", "api/chatbots", "api/v1/conversations?page=1&per_page=25"]],
      ["Conversations, rating = bad", ["api/chatbots", "api/v1/conversations?rating=bad&page=1&per_page=25"]],
      ["Conversations, search in messages (q=refund)", ["api/chatbots", "api/v1/conversations?q=refund&page=1&per_page=25"]],
      ["Conversations, last page (offset 9,975)", ["api/chatbots", `api/v1/conversations?page=${CONVERSATIONS / 25}&per_page=25`]],
      ["Transcript", [`api/v1/conversations/${firstPage[0].id}`]],
      ["Corrections", ["api/chatbots", "api/v1/chatbots/demo/corrections?page=1&per_page=25"]],
      ["Webhooks", ["api/v1/webhooks"]],
    ];
    const rows = [];
    ctx.details.console = {};
    for (const [label, paths] of pages) {
      const samples = await timeCalls(() => Promise.all(paths.map(get)), { count: ctx.quick ? 10 : 30, warmup: 3 });
      const p50 = percentile(samples, 50);
      const p95 = percentile(samples, 95);
      ctx.details.console[label] = { paths, p50, p95 };
      rows.push(row({ id: "11", figure: `console: ${label} p50, ${CONVERSATIONS / 1000}k conversations`, value: p50, unit: "ms", target: `p95 < ${TARGET_MS} ms`, pass: p95 < TARGET_MS, note: `p95 ${p95.toFixed(1)} ms` }));
    }
    return rows;
  } finally {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
