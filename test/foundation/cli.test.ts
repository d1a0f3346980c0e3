import { join } from "node:path";
import { describe, it as base } from "vitest";
import type { ChatService } from "../../src/service.js";
import { inCliWorkspace, runCli, type CliResult } from "../support/cli.js";

/** One test's own folder and database, so that the tests can run at the same time. */
interface Workspace {
  dir: string;
  cli(...args: string[]): Promise<CliResult>;
  /** Records the test starts from, made through the library (the commands that make them have their own test). */
  given(make: (service: ChatService) => Promise<unknown>): Promise<unknown>;
}

const it = base.extend<{ ws: Workspace }>({
  ws: async ({}, use) => inCliWorkspace(({ dir, cli, withService }) => use({ dir, cli: (...args) => cli(args), given: withService })),
});
const orgA = (service: ChatService) => service.orgs.create({ name: "A" });

// Each test runs the real binary a dozen times; on a loaded 2-core machine a spawn can take seconds. The tests share
// nothing, so they run at the same time, and so do the commands within a test whose order does not matter.
describe.concurrent("chatsvc CLI", { timeout: 60_000 }, () => {
  it("--help lists the commands and exits 0", async ({ expect }) => {
    const res = await runCli(["--help"]);
    expect(res.code).toBe(0);
    for (const command of ["init", "serve", "orgs", "users", "bots", "keys"]) expect(res.stdout).toContain(command);
  });

  it("init sets up an empty database once, printing the key with the attribution notice", async ({ expect, ws: { cli } }) => {
    const human = await cli("init");
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/sk_live_[0-9A-Za-z]{32}/);
    expect(human.stdout).toContain("svc-branding");
    const again = await cli("init", "--json");
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/^error: .*already initialised/);
    expect(again.stdout).toBe("");
  });

  it("init --json prints one JSON object with organisation, user, demo chatbot and key", async ({ expect, ws: { cli } }) => {
    const res = await cli("init", "--json");
    expect(res.code).toBe(0);
    const out = res.json();
    expect(out.organization.id).toBe(1);
    expect(out.user.email).toBe("owner@example.com");
    expect(out.chatbot.slug).toBe("demo");
    expect(out.key.key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    expect(out.key.prefix).toBe(out.key.key.slice(0, 15));
  });

  it("manages organisations, users and chatbots with --json output", async ({ expect, ws: { cli } }) => {
    const org = (await cli("orgs", "create", "--name", "Globex", "--credits", "500", "--json")).json();
    expect(org).toMatchObject({ id: 1, name: "Globex", credits_monthly: 500, brand_removal: false });

    // The organisation's own changes, its users and its chatbots touch different records.
    const orgs = async () => {
      const updated = (await cli("orgs", "update", "1", "--brand-removal", "--name", "Globex Corp", "--json")).json();
      expect(updated).toMatchObject({ name: "Globex Corp", brand_removal: true, credits_monthly: 500 });
      expect((await cli("orgs", "update", "1", "--no-brand-removal", "--json")).json().brand_removal).toBe(false);
      expect((await cli("orgs", "list", "--json")).json()).toHaveLength(1);
    };
    const users = async () => {
      const user = (await cli("users", "create", "--org", "1", "--email", "Ann@Globex.test", "--name", "Ann", "--json")).json();
      expect(user).toMatchObject({ organization_id: 1, email: "ann@globex.test", name: "Ann" });
      const dupe = await cli("users", "create", "--org", "1", "--email", "ann@globex.test");
      expect(dupe.code).not.toBe(0);
      expect(dupe.stderr).toContain("already been taken");
    };
    const bots = async () => {
      const [bot, badSlug] = await Promise.all([
        cli("bots", "create", "--org", "1", "--slug", "support", "--name", "Support", "--description", "Helps", "--language", "de", "--json"),
        cli("bots", "create", "--org", "1", "--slug", "Bad Slug!", "--name", "x"),
      ]);
      expect(bot.json()).toMatchObject({ slug: "support", name: "Support", description: "Helps", language: "de", is_active: true, model: null });
      expect(badSlug.code).not.toBe(0);
      expect(badSlug.stderr).toMatch(/^error: .*slug/i);
      const changed = (await cli("bots", "update", "support", "--inactive", "--model", "ollama:llama3.2", "--allowed-origins", "https://a.example,https://b.example", "--json")).json();
      expect(changed).toMatchObject({ is_active: false, model: "ollama:llama3.2", allowed_origins: ["https://a.example", "https://b.example"] });
      const [shown, listed] = await Promise.all([cli("bots", "show", "support", "--json"), cli("bots", "list", "--json")]);
      expect(shown.json().is_active).toBe(false);
      expect(listed.json().map((b: { slug: string }) => b.slug)).toEqual(["support"]);
      const deleted = await cli("bots", "delete", "support", "--json");
      expect(deleted.json()).toEqual({ slug: "support", deleted: true });
      expect((await cli("bots", "list", "--json")).json()).toEqual([]);
    };
    await Promise.all([orgs(), users(), bots()]);
  });

  it("bots create --config reads settings from a JSON file", async ({ expect, ws: { cli, dir, given } }) => {
    const { writeFileSync } = await import("node:fs");
    await given(orgA);
    const file = join(dir, "bot.json");
    writeFileSync(file, JSON.stringify({ greeting_message: "Hello there", appearance: { primary_color: "#ff0000", widget_theme: "dark" } }));
    const bot = (await cli("bots", "create", "--org", "1", "--slug", "cfg", "--name", "Cfg", "--config", file, "--json")).json();
    expect(bot.greeting_message).toBe("Hello there");
    expect(bot.appearance).toMatchObject({ primary_color: "#ff0000", widget_theme: "dark" });
    writeFileSync(file, JSON.stringify({ appearance: { primary_color: "red" } }));
    const bad = await cli("bots", "update", "cfg", "--config", file);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("hex colour");
  });

  it("bots budget shows and sets a chatbot's widget budgets", async ({ expect, ws: { cli, given } }) => {
    await given(async (service) => service.chatbots.create({ organization_id: (await orgA(service)).id, slug: "shop", name: "Shop" }));
    const set = (await cli("bots", "budget", "shop", "--per-hour", "5", "--visitor-per-day", "0", "--json")).json();
    expect(set).toEqual({
      limits: { visitor_per_day: 0, chatbot_per_hour: 5, chatbot_per_day: 1000 },
      overrides: { visitor_per_day: 0, chatbot_per_hour: 5, chatbot_per_day: null },
    });
    const [shown, bad] = await Promise.all([cli("bots", "budget", "shop"), cli("bots", "budget", "shop", "--per-day", "lots")]);
    expect(shown.stdout).toMatch(/chatbot_per_hour\s+5\s+chatbot/);
    expect(shown.stdout).toMatch(/chatbot_per_day\s+1000\s+default/);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("chatbot_per_day");
    expect((await cli("bots", "budget", "shop", "--per-hour", "default", "--json")).json().limits.chatbot_per_hour).toBe(200);
  });

  it("manages API keys through their whole life cycle", async ({ expect, ws: { cli, given } }) => {
    await given(async (service) => service.users.create({ organization_id: (await orgA(service)).id, email: "a@a.test" }));

    const [refused, past, badId] = await Promise.all([
      cli("keys", "create", "--email", "a@a.test", "--name", "k"),
      cli("keys", "create", "--email", "a@a.test", "--name", "old", "--expires", "2001-01-01", "--accept-attribution"),
      cli("keys", "disable", "abc"),
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("attribution");
    expect(refused.stderr).toContain("--accept-attribution");
    expect(past.stderr).toContain("future");
    expect(badId.code).not.toBe(0);
    expect(badId.stderr).toContain("positive integer");
    // Neither refused create left a key behind.
    expect((await cli("keys", "list", "--json")).json()).toEqual([]);

    const created = (await cli("keys", "create", "--email", "a@a.test", "--name", "prod", "--expires", "2999-12-31", "--accept-attribution", "--json")).json();
    expect(created.key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    expect(created).toMatchObject({ name: "prod", status: "active", expires_at: "3000-01-01T00:00:00.000Z", attribution_ip: "cli" });
    expect(created.attribution_accepted_at).toEqual(expect.any(String));

    const [listed, listedJson] = await Promise.all([cli("keys", "list"), cli("keys", "list", "--email", "a@a.test", "--json")]);
    expect(listed.stdout).toContain(created.key.slice(0, 15));
    expect(listed.stdout).not.toContain(created.key);
    expect(listedJson.json()).toHaveLength(1);
    expect(JSON.stringify(listedJson.json())).not.toContain(created.key);

    expect((await cli("keys", "rename", String(created.id), "primary", "--json")).json().name).toBe("primary");
    expect((await cli("keys", "disable", String(created.id), "--json")).json().status).toBe("disabled");
    expect((await cli("keys", "enable", String(created.id), "--json")).json().status).toBe("active");
    const regenerated = (await cli("keys", "regenerate", String(created.id), "--json")).json();
    expect(regenerated.key).toMatch(/^sk_live_/);
    expect(regenerated.key).not.toBe(created.key);
    expect(regenerated.id).toBe(created.id);
    expect((await cli("keys", "delete", String(created.id), "--json")).json()).toEqual({ id: created.id, deleted: true });
    const gone = await cli("keys", "disable", String(created.id));
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain("not found");
  });

  it("refuses an 11th active key for one user", async ({ expect, ws: { cli, given } }) => {
    await given(async (service) => {
      const user = await service.users.create({ organization_id: (await orgA(service)).id, email: "a@a.test" });
      for (let i = 0; i < 10; i++) await service.keys.create({ user_id: user.id, name: `k${i}`, accept_attribution: true });
    });
    const eleventh = await cli("keys", "create", "--email", "a@a.test", "--name", "k10", "--accept-attribution");
    expect(eleventh.code).not.toBe(0);
    expect(eleventh.stderr).toContain("at most 10 active");
    await cli("keys", "disable", "1");
    expect((await cli("keys", "create", "--email", "a@a.test", "--name", "k10", "--accept-attribution")).code).toBe(0);
    const reenable = await cli("keys", "enable", "1");
    expect(reenable.code).not.toBe(0);
  });
});
