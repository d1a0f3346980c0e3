import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { startHarness, type Harness } from "../support/harness.js";

// Verified keys are remembered in memory; these pin down that a change made
// elsewhere (the CLI is another process with its own connection) is seen by
// the very next request, with the exact 401 of each case.
let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

const cli = (...args: string[]) => runCli(["--db", h.dbFile, ...args]);

describe("a key verified before, then changed from another process", () => {
  it("disabled: the next request is 401 'API key is disabled'; enabled again: 200", async () => {
    expect((await h.call("/auth/test")).status).toBe(200);
    expect((await cli("keys", "disable", String(h.tenant.key.id))).code).toBe(0);
    expect(await h.call("/auth/test")).toMatchObject({ status: 401, body: { success: false, message: "API key is disabled" } });
    expect((await cli("keys", "enable", String(h.tenant.key.id))).code).toBe(0);
    expect((await h.call("/auth/test")).status).toBe(200);
  });

  it("deleted: the next request is 401 'Invalid API key'", async () => {
    expect((await h.call("/auth/test")).status).toBe(200);
    expect((await cli("keys", "delete", String(h.tenant.key.id))).code).toBe(0);
    expect(await h.call("/auth/test")).toMatchObject({ status: 401, body: { success: false, message: "Invalid API key" } });
  });

  it("regenerated: the old secret is 401 at once and the new one works", async () => {
    expect((await h.call("/auth/test")).status).toBe(200);
    const regenerated = await cli("keys", "regenerate", String(h.tenant.key.id), "--json");
    expect(regenerated.code).toBe(0);
    expect(await h.call("/auth/test")).toMatchObject({ status: 401, body: { message: "Invalid API key" } });
    expect((await h.call("/auth/test", { key: regenerated.json().key })).status).toBe(200);
  });
});

describe("a key verified before, then changed in this process", () => {
  it("disabled through the service: the next request is 401", async () => {
    expect((await h.call("/auth/test")).status).toBe(200);
    await h.service.keys.disable(h.tenant.key.id);
    expect(await h.call("/auth/test")).toMatchObject({ status: 401, body: { message: "API key is disabled" } });
  });

  it("expiring while remembered: 401 'API key has expired' once its time has passed", async () => {
    const key = await h.service.keys.create({ user_id: h.tenant.user.id, name: "short", expires_at: new Date(Date.now() + 600).toISOString(), accept_attribution: true });
    expect((await h.call("/auth/test", { key: key.key })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(await h.call("/auth/test", { key: key.key })).toMatchObject({ status: 401, body: { message: "API key has expired" } });
  });
});
