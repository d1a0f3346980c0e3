import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, expect, it } from "vitest";
import { createChatService } from "../../src/service.js";
import { ingestDocs } from "../chat/helpers.js";
import { request, tempDir } from "../support/harness.js";
import { sqliteOf } from "../support/sqlite.js";

const CHILD = fileURLToPath(new URL("./fixtures/serve-child.ts", import.meta.url));
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it("SIGKILL during a write burst: the database reopens intact, with no partial conversation and exact credits", async () => {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const db = `${dir}/chatsvc.db`;
  const setup = await createChatService({ env: {}, db });
  const tenant = await setup.bootstrap({ organizationName: "Acme", email: "owner@acme.test" });
  await ingestDocs(setup);
  await setup.close();

  const child = spawn(process.execPath, ["--import", "tsx", CHILD, db], { cwd: fileURLToPath(new URL("../..", import.meta.url)), stdio: ["ignore", "pipe", "inherit"] });
  cleanups.push(() => child.kill("SIGKILL"));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 15_000;
  while (!/listening (\S+)/.test(out)) {
    if (Date.now() > deadline) throw new Error(`child did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const api = `${/listening (\S+)/.exec(out)![1]}/api/v1`;
  const key = tenant.key.key;

  let answered = 0;
  let killed = false;
  // Clients open conversations and send messages nonstop; the process dies under them.
  const client = async (c: number) => {
    while (!killed) {
      try {
        const opened = await request(`${api}/chatbots/demo/conversations`, { key, json: { visitor_id: `client-${c}` } });
        for (let m = 0; m < 3 && !killed; m++) {
          const sent = await request(`${api}/chatbots/demo/conversations/${opened.body.data.conversation_id}/messages`, { key, json: { message: `How do I install Widgetron? (${c}/${m})` } });
          if (sent.status === 200) answered++;
        }
      } catch {
        return; // The connection died with the process.
      }
    }
  };
  const clients = Array.from({ length: 8 }, (_, c) => client(c));
  while (answered < 40) await new Promise((r) => setTimeout(r, 2));
  child.kill("SIGKILL");
  killed = true;
  expect(await exited).toBe("SIGKILL");
  await Promise.all(clients);

  const reopened = await createChatService({ env: {}, db });
  cleanups.push(() => reopened.close());
  const sqlite = sqliteOf(reopened);
  expect(sqlite.prepare("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
  expect(sqlite.prepare("PRAGMA foreign_key_check").all()).toEqual([]);
  const rows = sqlite.prepare("SELECT conversation_id, role FROM messages ORDER BY conversation_id, id").all() as { conversation_id: number; role: string }[];
  expect(rows.length).toBeGreaterThanOrEqual(answered * 2);
  const byConversation = new Map<number, string[]>();
  for (const row of rows) byConversation.set(row.conversation_id, [...(byConversation.get(row.conversation_id) ?? []), row.role]);
  // Each visitor message and its reply were written in one transaction: strictly alternating pairs.
  for (const [id, roles] of byConversation) expect(roles.join(","), `conversation ${id}`).toMatch(/^(user,assistant)(,user,assistant)*$/);
  const credits = (await reopened.credits.status(tenant.organization.id)).credits_used;
  expect(credits).toBe(rows.length / 2);
  // The reopened database serves requests.
  expect((await reopened.conversations.list(tenant.organization.id, {})).meta.total).toBeGreaterThan(0);
}, 40_000);
