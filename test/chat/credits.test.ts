import { afterEach, describe, expect, it } from "vitest";
import { testEngine } from "../support/database.js";
import { runCli } from "../support/cli.js";
import { addTenant, startHarness, type Harness } from "../support/harness.js";
import { ingestDocs, openConversation, rowCounts } from "./helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const QUESTION = { message: "How do I install Widgetron with npm?" };

describe("monthly credits", () => {
  it("at zero remaining the next message is 429 and nothing is stored", async () => {
    h = await startHarness();
    await ingestDocs(h.service);
    await h.service.credits.setMonthly(h.tenant.organization.id, 2);
    const id = await openConversation(h);
    const path = `/chatbots/demo/conversations/${id}/messages`;
    expect((await h.call(path, { json: QUESTION })).body.meta).toEqual({ credits_used: 1, credits_max: 2, credits_remaining: 1, this_message: 1 });
    // The fallback is charged too.
    expect((await h.call(path, { json: { message: "zzyzx qqqq" } })).body.meta).toEqual({ credits_used: 2, credits_max: 2, credits_remaining: 0, this_message: 1 });
    const before = (await rowCounts(h.service));
    const refused = await h.call(path, { json: QUESTION });
    expect(refused.status).toBe(429);
    expect(refused.body.success).toBe(false);
    expect(refused.body.message).toBe("Monthly credit limit reached");
    expect((await rowCounts(h.service))).toEqual(before);
    // Other organisations are unaffected.
    const other = await addTenant(h.service);
    const theirs = await h.service.conversations.start(other.organization.id, other.chatbot.slug, {});
    expect((await h.call(`/chatbots/${other.chatbot.slug}/conversations/${theirs.conversation_id}/messages`, { key: other.key.key, json: QUESTION })).status).toBe(200);
    // Raising the limit lets messages through again.
    await h.service.credits.setMonthly(h.tenant.organization.id, 3);
    expect((await h.call(path, { json: QUESTION })).status).toBe(200);
  });

  it("20 concurrent messages never charge more than the limit", async () => {
    h = await startHarness();
    await ingestDocs(h.service);
    await h.service.credits.setMonthly(h.tenant.organization.id, 5);
    const ids = await Promise.all(Array.from({ length: 4 }, () => openConversation(h!)));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => h!.call(`/chatbots/demo/conversations/${ids[i % 4]}/messages`, { json: QUESTION })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    const counts = (await rowCounts(h.service));
    expect(counts.credits_used).toBe(5);
    expect(counts.messages).toBe(10);
    expect(await h.service.credits.status(h.tenant.organization.id)).toMatchObject({ credits_used: 5, credits_remaining: 0 });
  });

  it("the cost per message comes from config, per model", async () => {
    h = await startHarness({ creditCosts: { extractive: 3 } });
    await ingestDocs(h.service);
    const id = await openConversation(h);
    const res = await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: QUESTION });
    expect(res.body.meta).toEqual({ credits_used: 3, credits_max: 10_000, credits_remaining: 9_997, this_message: 3 });
  });

  it("a message costing more than what remains is refused", async () => {
    h = await startHarness({ creditCosts: { extractive: 3 } });
    await ingestDocs(h.service);
    await h.service.credits.setMonthly(h.tenant.organization.id, 4);
    const id = await openConversation(h);
    expect((await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: QUESTION })).status).toBe(200);
    expect((await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: QUESTION })).status).toBe(429);
    expect((await h.service.credits.status(h.tenant.organization.id)).credits_used).toBe(3);
  });
});

describe("chatsvc credits", () => {
  // The CLI prints what the service calls tested above on both engines return: it runs here on SQLite, and against
  // PostgreSQL (`--database-url`) in test/scale, so each command does not start a process per engine.
  it.skipIf(testEngine === "postgres")("show and set, with errors for bad input", async () => {
    h = await startHarness();
    const org = String(h.tenant.organization.id);
    const db = h.database.cliArgs;
    const set = await runCli([...db, "credits", "set", "--org", org, "--monthly", "250", "--json"]);
    expect(set.code).toBe(0);
    expect(set.json()).toEqual({ month: new Date().toISOString().slice(0, 7), credits_used: 0, credits_max: 250, credits_remaining: 250 });
    await ingestDocs(h.service);
    const id = await openConversation(h);
    await h.call(`/chatbots/demo/conversations/${id}/messages`, { json: QUESTION });
    const show = await runCli([...db, "credits", "show", "--org", org]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/credits_used\s+1\n/);
    expect(show.stdout).toMatch(/credits_remaining\s+249\n/);
    const bad = await runCli([...db, "credits", "set", "--org", org, "--monthly", "-5"]);
    expect(bad.code).not.toBe(0);
    const unknown = await runCli([...db, "credits", "show", "--org", "999"]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("Organization 999 not found");
  });
});
