import { existsSync, readFileSync } from "node:fs";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addTenant, startHarness, type Harness } from "../support/harness.js";

/*
 * The operator console end to end: headless Chromium (Debian's `chromium`, driven by
 * playwright-core) against a real server. One browser and one server for the file;
 * each test signs in within its own browser context.
 */

const CHROMIUM = process.env.CHATSVC_CHROMIUM ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) console.warn(`test/console/e2e.test.ts: SKIPPED, no Chromium at ${CHROMIUM}. Install it (apt-get install chromium) or set CHATSVC_CHROMIUM.`);
const LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

// Completion, not speed: a page driven in a real browser takes seconds on a busy machine.
describe.skipIf(!HAVE_CHROMIUM)("the operator console in headless Chromium", { timeout: 60_000 }, () => {
  let h: Harness;
  let browser: Browser;
  let other: Awaited<ReturnType<typeof addTenant>>;

  beforeAll(async () => {
    [h, browser] = await Promise.all([startHarness(), chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS })]);
    other = await addTenant(h.service, "Other");
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  /** A new browser context signed in through a one-time link, as `chatsvc console-link` prints it. */
  async function signedIn(email = "owner@acme.test", viewport = { width: 1280, height: 820 }): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    // The browser logs a resource that failed to load, such as a missing /favicon.ico (the session check before sign-in is a 401 by design).
    page.on("console", (message) => void (message.type() === "error" && !message.text().includes("status of 401") && errors.push(message.text())));
    page.on("dialog", (dialog) => dialog.accept());
    const { token } = await h.service.consoleSessions.createLink(email);
    const failed: string[] = [];
    page.on("requestfailed", (request) => failed.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText}`));
    page.on("response", (response) => void (response.status() >= 400 && failed.push(`${response.request().method()} ${response.url()}: ${response.status()}`)));
    await page.goto(`${h.server.url}/console/#/sign-in/${token}`);
    await page
      .getByRole("heading", { name: "Overview", level: 1 })
      .waitFor()
      .catch(async (error: Error) => {
        // Say where the page was and what failed (a late answer to its first session check once signed it out: see below).
        const body = await page.evaluate(() => document.body.innerText.slice(0, 400)).catch(() => "(no body)");
        throw new Error(`${error.message}\nat ${page.url()}\npage: ${body}\nfailed requests: ${failed.join("; ") || "none"}\npage errors: ${errors.join("; ") || "none"}`);
      });
    return { context, page, errors };
  }

  it("signs in with a link, creates a chatbot, previews its look live, and uploads a file into its knowledge", async () => {
    const { context, page, errors } = await signedIn();
    // The link's token is spent and the session cookie is out of the page's reach.
    expect(await page.evaluate(() => document.cookie)).toBe("");
    await page.getByRole("link", { name: "Chatbots" }).click();
    await page.getByRole("heading", { name: "Chatbots", level: 1 }).waitFor();
    expect(await page.getByRole("link", { name: "Chatbots" }).getAttribute("aria-current")).toBe("page");

    await page.getByLabel("Name", { exact: true }).fill("Support");
    // The browser checks the slug before sending it (patterns are compiled with the v flag, where a bare "-" in a class is an error that drops the check).
    await page.getByLabel("Slug").fill("-support");
    expect(await page.getByLabel("Slug").evaluate((input: HTMLInputElement) => input.validity.patternMismatch)).toBe(true);
    await page.getByLabel("Slug").fill("support");
    await page.getByRole("button", { name: "Create chatbot" }).click();
    await page.getByRole("heading", { name: "Support", level: 1 }).waitFor();
    // The heading takes focus when the page opens (keyboard and screen-reader users land there).
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("H1");

    const preview = page.getByTestId("widget-preview");
    await page.getByLabel("Greeting").fill("Welcome to Support!");
    await preview.getByText("Welcome to Support!").waitFor();
    await page.getByLabel("Theme").selectOption("dark");
    expect(await preview.getAttribute("class")).toContain("wp-dark");
    await page.getByLabel("Sites where the widget may run").fill("https://www.example.com");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("status").getByText("Saved.").waitFor();
    expect(await h.service.chatbots.get("support")).toMatchObject({ greeting_message: "Welcome to Support!", allowed_origins: ["https://www.example.com"], appearance: { widget_theme: "dark" } });

    await page.goto(`${h.server.url}/console/#/knowledge/support`);
    await page.getByRole("heading", { name: "Knowledge", level: 1 }).waitFor();
    await page.locator('input[type="file"]').setInputFiles({ name: "pricing.md", mimeType: "text/markdown", buffer: Buffer.from("# Pricing\n\nThe Pro plan costs 20 euros a month, billed yearly.\n") });
    const row = page.getByRole("row", { name: /pricing\.md/ });
    await row.waitFor();
    expect(await row.innerText()).toMatch(/pricing\.md\s+text\s+\d+ B\s+1/);
    expect((await h.service.knowledge.list("support")).map((d) => d.name)).toEqual(["pricing.md"]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("stays signed in after a link's sign-in when the page's first session check is answered after it", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const { token } = await h.service.consoleSessions.createLink("owner@acme.test");
    // The check the page makes as it loads is sent at once (before the session cookie exists) and its answer held
    // until the sign-in is done, as a slow network or a loaded server may deliver it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let delivered!: () => void;
    const lateAnswer = new Promise<void>((resolve) => (delivered = resolve));
    let first = true;
    let firstStatus = 0;
    await page.route("**/console/api/session", async (route) => {
      if (!first || route.request().method() !== "GET") return route.continue();
      first = false;
      // The server's answer to that check as it was sent, without the cookie: fetched here rather than through the
      // browser, whose cookie jar may already hold the session by the time this handler runs.
      const answer = await fetch(route.request().url());
      firstStatus = answer.status;
      const body = await answer.text();
      await held;
      await route.fulfill({ status: answer.status, contentType: answer.headers.get("content-type") ?? undefined, body });
      delivered();
    });
    await page.goto(`${h.server.url}/console/#/sign-in/${token}`);
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
    release();
    await lateAnswer;
    expect(firstStatus).toBe(401);
    // A turn of the page's event loop for the late answer to be handled.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 50)));
    await page.getByRole("link", { name: "Chatbots" }).click();
    await page.getByRole("heading", { name: "Chatbots", level: 1 }).waitFor();
    expect(await page.getByRole("button", { name: "Sign in" }).count()).toBe(0);
    await context.close();
  });

  it("creates a key (shown once, after accepting attribution), disables it and regenerates it", async () => {
    const { context, page, errors } = await signedIn();
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    await page.getByLabel("Name", { exact: true }).fill("deploy");
    await page.getByLabel("I accept the attribution obligation").check();
    await page.getByRole("button", { name: "Create key" }).click();
    const created = (await page.getByTestId("new-key").innerText()).trim();
    expect(created).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    expect((await h.call("/auth/test", { key: created })).status).toBe(200);
    const row = page.getByRole("row", { name: /deploy/ });
    expect(await row.innerText()).toContain(`${created.slice(0, 15)}…`);
    expect(await row.innerText()).not.toContain(created.slice(15));

    await row.getByRole("button", { name: "Disable deploy" }).click();
    await row.getByText("disabled", { exact: true }).waitFor();
    expect((await h.call("/auth/test", { key: created })).status).toBe(401);

    await row.getByRole("button", { name: "Regenerate deploy" }).click();
    await page.getByTestId("new-key").getByText(/^sk_live_/).filter({ hasNotText: created }).waitFor();
    const regenerated = (await page.getByTestId("new-key").innerText()).trim();
    expect(regenerated).not.toBe(created);
    await row.getByText("active", { exact: true }).waitFor();
    expect((await h.call("/auth/test", { key: regenerated })).status).toBe(200);
    expect((await h.call("/auth/test", { key: created })).status).toBe(401);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows the day's conversations on the Overview and exports the leads as CSV", async () => {
    const started = await h.call("/chatbots/demo/conversations", { json: { visitor_name: "Grace" } });
    const id = started.body.data.conversation_id;
    await h.call(`/chatbots/demo/conversations/${id}/leads`, { json: { name: "Grace Hopper", email: "grace@example.com" } });
    const { context, page, errors } = await signedIn();
    const conversations = Number(await page.locator(".total", { hasText: "Conversations" }).locator("dd").innerText());
    expect(conversations).toBeGreaterThanOrEqual(1);
    await page.getByRole("img", { name: /^Conversations: Conversations \d+/ }).waitFor();

    await page.getByRole("link", { name: "Leads" }).click();
    await page.getByRole("cell", { name: "Grace Hopper" }).waitFor();
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export CSV" }).click()]);
    const csv = readFileSync(await download.path(), "utf8");
    expect(csv.split("\r\n")[0]).toContain("email");
    expect(csv).toContain("grace@example.com");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("a second organisation's user sees none of the first's chatbots, conversations or keys", async () => {
    await h.call("/chatbots/demo/conversations", { json: { visitor_name: "Ada" } });
    const { context, page, errors } = await signedIn(other.user.email, { width: 390, height: 844 });
    expect(await page.locator(".total", { hasText: "Conversations" }).locator("dd").innerText()).toBe("0");
    await page.getByRole("link", { name: "Chatbots" }).click();
    await page.getByRole("heading", { name: "Chatbots", level: 1 }).waitFor();
    const bots = page.locator("tbody tr");
    // The heading shows before the list has loaded: wait for a row before reading them all.
    await bots.first().waitFor();
    expect(await bots.allInnerTexts()).toEqual([expect.stringContaining(other.chatbot.name)]);
    // At 390 px the page does not scroll sideways (screen-reader text in a table once widened it).
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    await page.getByRole("link", { name: "Conversations" }).click();
    await page.getByText("No conversations match.").waitFor();
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    await page.locator("tbody tr").first().waitFor();
    const keys = await page.locator("tbody tr").allInnerTexts();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toContain(other.user.email);
    // A wide table scrolls inside its frame; the page itself stays 390 px wide.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API key").waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
});
