import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, expect, it } from "vitest";
import { ingestDocs } from "../chat/helpers.js";
import { startHarness, type ApiResponse, type Harness } from "../support/harness.js";
import { testEngine } from "../support/database.js";
import { sqlOf } from "../support/sql.js";
import { sqliteOf } from "../support/sqlite.js";

const WRITER = fileURLToPath(new URL("./fixtures/writer-child.ts", import.meta.url));
const CONVERSATIONS = 50;
const CLIENTS = 20;
const MESSAGES_EACH = 3;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

it("50 conversations on 20 parallel clients while another process ingests and changes keys: no SQLITE_BUSY, nothing lost or duplicated, credits exact", async () => {
  h = await startHarness({ rateLimit: false });
  const harness = h;
  await ingestDocs(harness.service);
  const creditsBefore = (await harness.service.credits.status(harness.tenant.organization.id)).credits_used;

  const writer = spawn(process.execPath, ["--import", "tsx", WRITER, harness.database.options.database ?? harness.dbFile, String(harness.tenant.user.id)], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let writerOut = "";
  writer.stdout.on("data", (d: Buffer) => (writerOut += d.toString()));
  writer.stderr.on("data", (d: Buffer) => (writerOut += d.toString()));
  const writerExit = new Promise<number | null>((resolve) => writer.on("exit", resolve));
  try {
    // Start the load once the other writer is running. No deadline of its own: starting it (tsx
    // compiling the service) takes what the machine gives it, and the test's timeout bounds it.
    while (!writerOut.includes("started")) {
      if (writer.exitCode !== null) throw new Error(`writer did not start: ${writerOut}`);
      await new Promise((r) => setTimeout(r, 20));
    }

    const opened = await Promise.all(Array.from({ length: CONVERSATIONS }, (_, i) => harness.call("/chatbots/demo/conversations", { json: { visitor_id: `v${i}` } })));
    expect(opened.map((r) => r.status)).toEqual(Array(CONVERSATIONS).fill(201));
    const ids = opened.map((r) => r.body.data.conversation_id as number);

    // Tasks in an interleaved order, so clients often hit the same conversation at once.
    const tasks = ids.flatMap((id, c) => Array.from({ length: MESSAGES_EACH }, (_, m) => ({ id, text: `conversation ${c} message ${m}: how do I install Widgetron?` })));
    tasks.sort((x, y) => (x.text.length * 7919 + x.id) % 13 - ((y.text.length * 7919 + y.id) % 13));
    const answers: { task: (typeof tasks)[number]; res: ApiResponse }[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < tasks.length) {
          const task = tasks[next++]!;
          answers.push({ task, res: await harness.call(`/chatbots/demo/conversations/${task.id}/messages`, { json: { message: task.text } }) });
        }
      }),
    );

    // The other writer ran for the whole load; closing its stdin stops it.
    expect(writer.exitCode, writerOut).toBeNull();
    writer.stdin.end();
    const failures = answers.filter((a) => a.res.status !== 200).map((a) => `${a.res.status} ${a.res.text}`);
    expect(failures).toEqual([]);
    expect(answers).toHaveLength(CONVERSATIONS * MESSAGES_EACH);
    expect(new Set(answers.map((a) => a.res.body.data.message_id)).size).toBe(answers.length);

    for (const [c, id] of ids.entries()) {
      const rows = await sqlOf(harness.service).all<{ role: string; content: string }>("SELECT role, content FROM messages WHERE conversation_id = ? ORDER BY id", id);
      const users = rows.filter((r) => r.role === "user").map((r) => r.content).sort();
      expect(users).toEqual(Array.from({ length: MESSAGES_EACH }, (_, m) => `conversation ${c} message ${m}: how do I install Widgetron?`).sort());
      expect(rows.filter((r) => r.role === "assistant")).toHaveLength(MESSAGES_EACH);
      const history = await harness.call(`/chatbots/demo/conversations/${id}`);
      expect(history.body.data.message_count).toBe(MESSAGES_EACH * 2);
    }
    const credits = await harness.service.credits.status(harness.tenant.organization.id);
    expect(credits.credits_used - creditsBefore).toBe(CONVERSATIONS * MESSAGES_EACH);
    const lastMeta = answers.map((a) => a.res.body.meta.credits_used as number).sort((x, y) => x - y);
    expect(lastMeta.at(-1)).toBe(credits.credits_used);
    expect(new Set(lastMeta).size).toBe(lastMeta.length);

    expect(await writerExit).toBe(0);
    const [, ingests, keyChanges] = /done (\d+) (\d+)/.exec(writerOut) ?? [];
    expect(Number(ingests), writerOut).toBeGreaterThan(0);
    expect(Number(keyChanges)).toBeGreaterThan(0);
    // The file is consistent, as a new connection sees it. (PRAGMA integrity_check on the serving
    // connection, whose FTS5 structure was cached while the other process wrote, reports a false
    // "fts5: corruption found reading blob" on SQLite 3.53; FTS5's own check and searches are fine.)
    if (testEngine === "sqlite") {
      const Database = (await import("better-sqlite3")).default;
      const fresh = new Database(harness.dbFile, { readonly: true });
      expect(fresh.prepare("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
      fresh.close();
      expect(() => sqliteOf(harness.service).prepare("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)").run()).not.toThrow();
    }
    // The server answers from the other process's latest revision.
    const latest = await harness.call(`/chatbots/demo/conversations/${ids[0]}/messages`, { json: { message: "What are the rotating notes about Widgetron upgrades?" } });
    expect(latest.body.data.reply).toContain(`Revision ${Number(ingests) - 1} of the rotating notes`);
  } finally {
    writer.kill("SIGKILL");
  }
}, 120_000);
