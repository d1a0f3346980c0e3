import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../src/index.js";
import { ingestDocs } from "../chat/helpers.js";
import { startHarness, type Harness } from "../support/harness.js";
import { startReceiver, type Receiver } from "../webhooks/support/receiver.js";

/*
 * The console's operator flows end to end in headless Chromium against a real server: a visitor
 * asking through the chatbot page's live preview, an operator taking the conversation over and
 * answering (seen back in the preview), rating shown and filtered, "Improve this answer" making
 * a correction, and a webhook test event to a real receiver.
 */

const CHROMIUM = process.env.CHATSVC_CHROMIUM ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) console.warn(`test/console/operator-e2e.test.ts: SKIPPED, no Chromium at ${CHROMIUM}.`);
// Playwright's own waits end before vitest's test timeout, so a failure names the step that hung.
const STEP_MS = 15_000;
const LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

// Completion, not speed: a page driven in a real browser takes seconds on a busy machine.
describe.skipIf(!HAVE_CHROMIUM)("operator flows in the console", { timeout: 60_000 }, () => {
  let h: Harness;
  let browser: Browser;
  let receiver: Receiver;

  beforeAll(async () => {
    [h, browser, receiver] = await Promise.all([
      startHarness({ webhooks: { allowPrivateNetworks: true } }),
      chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS }),
      startReceiver(),
    ]);
    await ingestDocs(h.service);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await receiver?.close();
  });

  async function signIn(page: Page): Promise<void> {
    const { token } = await h.service.consoleSessions.createLink("owner@acme.test");
    await page.goto(`${h.server.url}/console/#/sign-in/${token}`);
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
  }

  it("a question in the live preview shows up in Conversations; the operator takes over, replies, improves the answer; the preview shows the agent's reply", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    context.setDefaultTimeout(STEP_MS);
    const visitor = await context.newPage();
    const operator = await context.newPage();
    for (const page of [visitor, operator]) page.on("pageerror", (e) => errors.push(e.message));
    await signIn(visitor);

    // The visitor side: the chatbot page's preview chats for real.
    await visitor.goto(`${h.server.url}/console/#/chatbots/demo`);
    const preview = visitor.getByTestId("widget-preview");
    await preview.getByLabel("Ask the preview").fill("How do I install Widgetron with npm?");
    await preview.getByRole("button", { name: "Send" }).click();
    await preview.locator(".wp-reply").first().waitFor();
    expect(await preview.locator(".wp-reply").first().innerText()).toMatch(/npm/i);

    // The operator side: the conversation is listed, with a rating once the visitor rated the reply.
    const [listed] = (await h.call("/conversations?q=install%20widgetron")).body.data;
    expect(listed).toMatchObject({ visitor: { name: "Console preview" }, message_count: 2 });
    const detail = (await h.call(`/conversations/${listed.id}`)).body.data;
    const reply = detail.messages.find((m: { role: string }) => m.role === "assistant");
    await h.call(`/chatbots/demo/conversations/${listed.id}/messages/rate`, { json: { message_id: reply.id, rating: "bad" } });

    await operator.goto(`${h.server.url}/console/#/conversations`);
    await operator.getByRole("heading", { name: "Conversations", level: 1 }).waitFor();
    await operator.getByLabel("Rating").selectOption("bad");
    await operator.getByLabel("Search messages").fill("install widgetron");
    await operator.getByLabel("Search messages").press("Enter");
    const row = operator.getByRole("row", { name: /Console preview/ });
    await row.waitFor();
    expect(await operator.locator("tbody tr").count()).toBe(1);
    await operator.getByLabel("Rating").selectOption("good");
    await operator.getByText("No conversations match.").waitFor();
    await operator.getByLabel("Rating").selectOption("bad");
    await row.getByRole("link").click();
    await operator.getByRole("heading", { name: `Conversation ${listed.id}`, level: 1 }).waitFor();
    const answer = operator.locator(".msg.assistant").first();
    await answer.getByText("rated bad").waitFor();

    // Take over and reply as an agent: the visitor's preview shows it.
    await operator.getByRole("button", { name: "Take over" }).click();
    await operator.getByLabel("Reply as an agent").fill("A person here: run **npm install widgetron**.");
    await operator.getByRole("button", { name: "Send reply" }).click();
    await operator.locator(".msg.agent").getByText("A person here").waitFor();
    await preview.locator(".wp-agent").getByText("A person here").waitFor({ timeout: 10_000 });
    expect(await preview.locator(".wp-agent strong").innerText()).toBe("npm install widgetron");

    // Improve the badly rated answer: it becomes a correction, listed in Corrections.
    await answer.getByRole("button", { name: "Improve this answer" }).click();
    await answer.getByLabel("Better answer").fill("Run `npm install widgetron`, then `npx widgetron init`.");
    await answer.getByRole("button", { name: "Save correction" }).click();
    await answer.getByRole("status").getByText(/Correction saved/).waitFor();
    await answer.getByRole("link", { name: "See it in Corrections" }).click();
    await operator.getByRole("heading", { name: "Corrections", level: 1 }).waitFor();
    const corrected = operator.getByRole("row", { name: /How do I install Widgetron with npm\?/ });
    await corrected.waitFor();
    expect(await corrected.innerText()).toContain("npx widgetron init");
    expect(await corrected.getAttribute("aria-current")).toBe("true");
    const [stored] = (await h.call("/chatbots/demo/corrections")).body.data;
    expect(stored).toMatchObject({ question: "How do I install Widgetron with npm?", answer: "Run `npm install widgetron`, then `npx widgetron init`." });
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  it("adds, edits and deletes a correction on the Corrections page", { timeout: 60_000 }, async () => {
    const context = await browser.newContext();
    context.setDefaultTimeout(STEP_MS);
    const page = await context.newPage();
    await signIn(page);
    await page.getByRole("link", { name: "Corrections" }).click();
    await page.getByRole("heading", { name: "Corrections", level: 1 }).waitFor();
    await page.getByLabel("Question").fill("What are your opening hours?");
    await page.getByLabel("Answer").fill("Nine to five, Monday to Friday.");
    await page.getByRole("button", { name: "Add correction" }).click();
    const row = page.getByRole("row", { name: /opening hours/ });
    await row.waitFor();
    await row.getByRole("button", { name: /^Edit/ }).click();
    await page.getByLabel("Answer").fill("Eight to six, every weekday.");
    await page.getByRole("button", { name: "Save correction" }).click();
    await row.getByText("Eight to six, every weekday.").waitFor();
    const [edited] = (await h.call("/chatbots/demo/corrections")).body.data;
    expect(edited).toMatchObject({ question: "What are your opening hours?", answer: "Eight to six, every weekday." });
    page.on("dialog", (dialog) => dialog.accept());
    await row.getByRole("button", { name: /^Delete/ }).click();
    await page.getByRole("status").getByText("Correction deleted.").waitFor();
    expect((await h.call("/chatbots/demo/corrections")).body.data.map((c: { id: number }) => c.id)).not.toContain(edited.id);
    await context.close();
  });

  it("sends a webhook test event to a real receiver and shows that it was delivered", async () => {
    const { body } = await h.call("/webhooks", { json: { url: `${receiver.url}/console-test`, events: ["lead_captured"], name: "Receiver" } });
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page);
    await page.getByRole("link", { name: "Webhooks" }).click();
    const row = page.getByRole("row", { name: /Receiver/ });
    await row.getByRole("button", { name: "Send a test event to Receiver" }).click();
    await row.getByRole("status").getByText(/^Delivered: HTTP 200/).waitFor();
    const got = receiver.received.find((r) => r.path === "/console-test")!;
    expect(got.json.event).toBe("webhook_test");
    expect(verifyWebhook(body.data.secret, got.headers, got.body)).toBe(true);
    await context.close();
  });
});
