import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { startHarness, type Harness } from "../support/harness.js";

// Chatbots are remembered by slug in memory; these pin down that a change made
// elsewhere (the CLI is another process with its own connection) is seen by the
// very next request, and one made through the service at once.
let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

const cli = (...args: string[]) => runCli(["--db", h.dbFile, ...args]);
const open = () => h.call("/chatbots/demo/conversations", { method: "POST", json: {} });

describe("a chatbot resolved before, then changed from another process", () => {
  it("taken offline: the next conversation is 403 'Chatbot is not active'; back online: 201", async () => {
    expect((await open()).status).toBe(201);
    expect((await cli("bots", "update", "demo", "--inactive")).code).toBe(0);
    expect(await open()).toMatchObject({ status: 403, body: { success: false, message: "Chatbot is not active" } });
    expect((await cli("bots", "update", "demo", "--active")).code).toBe(0);
    expect((await open()).status).toBe(201);
  });

  it("renamed and given allowed origins: the next read shows both", async () => {
    expect((await h.call("/chatbots/demo")).body.data).toMatchObject({ display_name: expect.any(String) });
    expect((await cli("bots", "update", "demo", "--display-name", "Helper", "--allowed-origins", "https://shop.example.com")).code).toBe(0);
    expect((await h.call("/chatbots/demo")).body.data.display_name).toBe("Helper");
    expect((await h.service.chatbots.get("demo")).allowed_origins).toEqual(["https://shop.example.com"]);
  });

  it("deleted: the next request is 403, as for any unknown slug", async () => {
    expect((await open()).status).toBe(201);
    expect((await cli("bots", "delete", "demo")).code).toBe(0);
    expect(await open()).toMatchObject({ status: 403, body: { message: "Chatbot not found or access denied" } });
  });
});

describe("a chatbot resolved before, then changed in this process", () => {
  it("taken offline through the service: the next conversation is 403", async () => {
    expect((await open()).status).toBe(201);
    await h.service.chatbots.update("demo", { is_active: false });
    expect(await open()).toMatchObject({ status: 403, body: { message: "Chatbot is not active" } });
  });

  it("hands out one shared record that cannot be changed in place", async () => {
    const bot = await h.service.chatbots.get("demo");
    expect(await h.service.chatbots.get("demo")).toBe(bot);
    expect(() => bot.allowed_origins.push("https://evil.example.com")).toThrow(TypeError);
    expect((await h.service.chatbots.get("demo")).allowed_origins).not.toContain("https://evil.example.com");
  });
});
