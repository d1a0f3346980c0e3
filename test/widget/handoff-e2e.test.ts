import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "../support/harness.js";

/*
 * Human handoff in the widget, in headless Chromium against the in-process
 * server's demo page: the visitor asks for a person, the bot goes quiet, and an
 * operator's reply (through the API, then typed in the operator console) shows up
 * in the open panel without a reload.
 */

const CHROMIUM = process.env.CHATSVC_CHROMIUM ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

describe.skipIf(!HAVE_CHROMIUM)("human handoff in the widget", () => {
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    [h, browser] = await Promise.all([startHarness(), chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS })]);
    await h.service.chatbots.update("demo", { handoff_enabled: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it("the visitor asks for a person; the bot stays quiet; the person's reply appears in the open panel", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(h.server.url);
    await page.getByRole("button", { name: /^Open chat with / }).click();
    const panel = page.getByRole("dialog", { name: /^Chat with / });

    const asked = page.waitForResponse((r) => r.url().endsWith("/handoff") && r.request().method() === "POST");
    await panel.getByRole("button", { name: "Talk to a person" }).click();
    expect((await asked).status()).toBe(200);
    await panel.getByText("We've asked a person to join. They'll reply here.").waitFor();
    await panel.getByText("A person will reply here", { exact: true }).waitFor();

    const input = panel.getByRole("textbox", { name: "Message" });
    await input.fill("I need a refund, please.");
    await input.press("Enter");
    await panel.getByText("Sent. A person will reply here.").waitFor();
    // Only the greeting is on the bot's side: no reply was generated.
    expect(await panel.locator(".msg.bot").count()).toBe(1);

    const [conversation] = (await h.call("/conversations?status=human")).body.data;
    const posted = await h.call(`/conversations/${conversation.id}/messages`, { json: { message: "Hi, **Ana** here. I'll sort it out.", role: "agent", agent_name: "Ana" } });
    expect(posted.status).toBe(201);

    // The panel polls every 1.5 s while open; the allowance here is for a loaded machine.
    const agent = panel.locator(".msg.agent");
    await agent.waitFor({ timeout: 10_000 });
    expect(await agent.locator(".who").innerText()).toBe("Ana");
    expect(await agent.locator(".bubble strong").innerText()).toBe("Ana");
    expect(await agent.locator(".svc-branding").count()).toBe(0);

    // The same from the operator console: the person answers in the transcript, the open panel shows it.
    const operatorContext = await browser.newContext();
    const operator = await operatorContext.newPage();
    operator.on("pageerror", (e) => errors.push(e.message));
    const { token } = await h.service.consoleSessions.createLink("owner@acme.test");
    await operator.goto(`${h.server.url}/console/#/sign-in/${token}`);
    await operator.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
    await operator.goto(`${h.server.url}/console/#/conversations/${conversation.id}`);
    await operator.getByLabel("Reply as an agent").fill("Your refund is on its way: **3 days**.");
    await operator.getByRole("button", { name: "Send reply" }).click();
    const fromConsole = panel.locator(".msg.agent").filter({ hasText: "Your refund is on its way" });
    await fromConsole.waitFor({ timeout: 10_000 });
    expect(await fromConsole.locator(".bubble strong").innerText()).toBe("3 days");
    expect(await fromConsole.locator(".svc-branding").count()).toBe(0);
    expect(errors).toEqual([]);
    await operatorContext.close();
    await page.close();
  }, 60_000);
});
