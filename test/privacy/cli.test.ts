import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChatService } from "../../src/service.js";
import { runCli } from "../support/cli.js";
import { addTenant, tempDir } from "../support/harness.js";
import { csvObjects } from "./csv.js";

const { dir, cleanup } = tempDir();
const db = join(dir, "cli.db");
const cli = (args: string[]) => runCli(["--db", db, ...args]);
let acme: number;

beforeAll(async () => {
  const service = await createChatService({ db, env: {}, logLevel: "warn", renderWorker: false });
  try {
    acme = (await service.bootstrap({ organizationName: "Acme", email: "owner@acme.test" })).organization.id;
    const tenant = await addTenant(service, "Other");
    const other = tenant.organization.id;
    const ours = (await service.conversations.start(acme, "demo", { visitor_id: "v-1" })).conversation_id;
    await service.chat.post(acme, ours, { message: "=1+1, and \"more\"", role: "user" });
    await service.leads.capture(acme, "demo", ours, { email: "ana@example.com" });
    const theirs = (await service.conversations.start(other, tenant.chatbot.slug, { visitor_id: "v-1" })).conversation_id;
    await service.chat.post(other, theirs, { message: "theirs", role: "user" });
  } finally {
    await service.close();
  }
});
afterAll(() => cleanup());

// Spawns the real binary several times; on a loaded 2-core machine a spawn can take seconds.
describe("chatsvc export, visitors erase, audit list, orgs update --retention-days", { timeout: 60_000 }, () => {
  it("exports to a private file or stdout, scoped to one organisation", async () => {
    const file = join(dir, "conversations.csv");
    // Three reads of the same records: they run at the same time.
    const [written, jsonl, ambiguous] = await Promise.all([
      cli(["export", "conversations", "--org", String(acme), "--format", "csv", "--out", file]),
      cli(["export", "conversations", "--chatbot", "other-bot"]),
      cli(["export", "leads"]),
    ]);
    expect(written.stderr).toBe("");
    expect(written.code).toBe(0);
    expect(written.stdout).toBe("");
    expect(statSync(file).mode & 0o077).toBe(0);
    expect(csvObjects(readFileSync(file, "utf8")).map((r) => r.content)).toEqual(["'=1+1, and \"more\""]);

    const lines = jsonl.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => l.messages[0].content)).toEqual(["theirs"]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toMatch(/2 organisations: name one with --org/);
  });

  it("erases a visitor in one organisation and audits it with the command as the actor", async () => {
    // The refused erasure selects nothing, so it runs beside the real one.
    const [erased, neither] = await Promise.all([
      cli(["visitors", "erase", "--org", String(acme), "--visitor-id", "v-1", "--json"]),
      cli(["visitors", "erase", "--org", String(acme)]),
    ]);
    expect(erased.code).toBe(0);
    expect(erased.json()).toEqual({ conversations: 1, messages: 1, leads: 1, webhook_deliveries: 0 });
    expect(neither.code).toBe(1);
    expect(neither.stderr).toMatch(/exactly one of visitor_id or email/);

    const [auditJson, auditTable] = await Promise.all([cli(["audit", "list", "--org", String(acme), "--json"]), cli(["audit", "list"])]);
    const audit = auditJson.json();
    expect(audit).toEqual([expect.objectContaining({ action: "visitor_erased", actor: "cli visitors erase", detail: { selector: "visitor_id" }, counts: erased.json() })]);
    expect(auditTable.stdout).toMatch(/visitor_erased\s+cli visitors erase\s+selector=visitor_id\s+1 conversations, 1 messages, 1 leads, 0 deliveries/);
  });

  it("sets and clears an organisation's retention", async () => {
    expect((await cli(["orgs", "update", String(acme), "--retention-days", "30", "--json"])).json()).toMatchObject({ id: acme, retention_days: 30 });
    expect((await cli(["orgs", "update", String(acme), "--retention-days", "off", "--json"])).json()).toMatchObject({ retention_days: null });
  });
});
