import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_CLI_DIR } from "../support/build-cli.js";
import { runCli } from "../support/cli.js";
import { request, tempDir } from "../support/harness.js";

/*
 * The widget end to end: headless Chromium (Debian's `chromium`, driven by
 * playwright-core) against a real `chatsvc serve` process on an empty folder.
 * One browser and one server for the file; each test has its own browser context.
 */

const CHROMIUM = process.env.CHATSVC_CHROMIUM ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) {
  console.warn(`test/widget/e2e.test.ts: SKIPPED, no Chromium at ${CHROMIUM}. Install it (apt-get install chromium) or set CHATSVC_CHROMIUM.`);
}

// Without the background-networking flags Chromium's own connections are refused on a closed network and slow everything.
const LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const ARTIFACTS = join(import.meta.dirname, "..", "..", "test-artifacts");
const QUESTION = "How do I create an API key?";
const ATTACK = '<img src=x onerror="window.__pwned = 1"><b>bold?</b>';

interface Serve {
  url: string;
  key: string;
  dir: string;
  stop(): Promise<void>;
}

describe.skipIf(!HAVE_CHROMIUM)("the widget in headless Chromium against `chatsvc serve`", () => {
  let serve: Serve;
  let browser: Browser;

  beforeAll(async () => {
    [serve, browser] = await Promise.all([startServe(), chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS })]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await serve?.stop();
  });

  it("demo page: ask, see a streamed grounded answer with visible branding, rate it, leave a lead, reload and see the history", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
    const page = await context.newPage();
    const pageErrors = collectErrors(page);
    await page.goto(serve.url);

    const launcher = page.getByRole("button", { name: "Open chat with chatsvc assistant" });
    await launcher.click();
    const panel = page.getByRole("dialog", { name: "Chat with chatsvc assistant" });
    await panel.waitFor();
    const input = panel.getByRole("textbox", { name: "Message" });
    expect(await isFocused(input)).toBe(true);
    await panel.getByText("Hi! I know chatsvc's documentation.").waitFor();

    await input.fill(QUESTION);
    const sent = page.waitForResponse((r) => r.url().endsWith("/messages") && r.request().method() === "POST");
    await input.press("Enter");
    const response = await sent;
    expect(response.headers()["content-type"]).toMatch(/^text\/event-stream/);
    await settled(page, 2);

    const answer = panel.locator(".msg.bot").nth(1);
    expect(await answer.locator(".source").count()).toBeGreaterThan(0);
    // A file source shows its title beside its file name.
    expect(await answer.locator(".source").first().innerText()).toMatch(/^\S.* \([\w-]+\.md\)$/);
    expect((await answer.locator(".bubble").innerText()).toLowerCase()).toContain("key");
    await expectVisibleBranding(answer.locator(".svc-branding"));

    const helpful = answer.getByRole("button", { name: "Helpful", exact: true });
    const rated = page.waitForResponse((r) => r.url().endsWith("/messages/rate"));
    await helpful.click();
    expect((await rated).status()).toBe(200);
    await waitForAttribute(helpful, "aria-pressed", "true");

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "widget-open.png") });

    await input.fill(ATTACK);
    await input.press("Enter");
    await settled(page, 3);
    await expectShownAsText(panel.locator(".msg.user .bubble").nth(1), ATTACK);

    await panel.getByRole("button", { name: "Leave your contact details" }).click();
    const form = panel.getByRole("form", { name: "Your contact details" });
    await form.getByLabel("Name").fill("Ada Lovelace");
    await form.getByLabel("Email").fill("ada@example.com");
    await form.getByRole("button", { name: "Send", exact: true }).click();
    await panel.getByText("Thanks, Ada Lovelace! We'll be in touch soon.").waitFor();
    const leads = await request(`${serve.url}/api/v1/leads`, { key: serve.key });
    expect(leads.body.data[0]).toMatchObject({ name: "Ada Lovelace", email: "ada@example.com", source: "widget" });

    await page.reload();
    await panel.waitFor();
    const restored = panel.locator(".msg.user .bubble");
    await restored.nth(1).waitFor();
    expect(await restored.nth(0).innerText()).toBe(QUESTION);
    await expectShownAsText(restored.nth(1), ATTACK);
    await expectVisibleBranding(panel.locator(".msg.bot").nth(1).locator(".svc-branding"));

    await input.press("Escape");
    await panel.waitFor({ state: "hidden" });
    expect(await isFocused(page.getByRole("button", { name: "Open chat with chatsvc assistant" }))).toBe(true);

    await page.setViewportSize({ width: 390, height: 760 });
    await page.getByRole("button", { name: "Open chat with chatsvc assistant" }).click();
    await panel.evaluate((el) => Promise.all(el.getAnimations().map((a) => a.finished)));
    const box = (await panel.boundingBox())!;
    expect([box.x, box.y, box.width, Math.round(box.height)]).toEqual([0, 0, 390, 760]);

    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(pageErrors).toEqual([]);
    await context.close();
  }, 60_000);

  it("another website: refused until its origin is allowed, then unaffected by the host page's CSS", async () => {
    const host = await startHostPage(serve.url);
    const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
    const page = await context.newPage();
    const pageErrors = collectErrors(page);
    try {
      const warning = page.waitForEvent("console", (m) => m.text().startsWith("chatsvc widget (demo) not shown"));
      await page.goto(host.url);
      expect((await warning).text()).toContain(`--allowed-origins ${host.url}`);
      expect(await page.locator("chatsvc-widget").count()).toBe(0);

      const updated = await runCli(["bots", "update", "demo", "--allowed-origins", `https://other.example,${host.url}`], { cwd: serve.dir });
      expect(updated.code, updated.stderr).toBe(0);

      await page.reload();
      await page.getByRole("button", { name: "Open chat with chatsvc assistant" }).click();
      const panel = page.getByRole("dialog", { name: "Chat with chatsvc assistant" });
      await panel.getByRole("textbox", { name: "Message" }).fill(QUESTION);
      await panel.getByRole("textbox", { name: "Message" }).press("Enter");
      await settled(page, 2);
      const answer = panel.locator(".msg.bot").nth(1);
      await expectVisibleBranding(answer.locator(".svc-branding"));
      // The host page's hostile rules (red, 40px, hidden branding) stop at the Shadow DOM.
      const styles = await answer.locator(".bubble").evaluate((el) => ({ color: getComputedStyle(el).color, fontSize: getComputedStyle(el).fontSize }));
      expect(styles).toEqual({ color: "rgb(15, 23, 42)", fontSize: "14px" });
      const launcherBackground = await page.locator("chatsvc-widget .launcher").evaluate((el) => getComputedStyle(el).backgroundColor);
      expect(launcherBackground).toBe("rgb(37, 99, 235)");
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
      await host.close();
    }
  }, 60_000);
});

/** Waits until the widget shows `botMessages` assistant messages (greeting included) and none is still streaming. */
async function settled(page: Page, botMessages: number): Promise<void> {
  await page.waitForFunction((n) => {
    const root = document.querySelector("chatsvc-widget")?.shadowRoot;
    return !!root && root.querySelectorAll(".msg.bot").length >= n && root.querySelector("[aria-busy]") === null;
  }, botMessages);
}

async function isFocused(locator: Locator): Promise<boolean> {
  return locator.evaluate((el) => (el.getRootNode() as Document | ShadowRoot).activeElement === el);
}

async function waitForAttribute(locator: Locator, name: string, value: string): Promise<void> {
  await locator.page().waitForFunction(([el, n, v]) => (el as Element).getAttribute(n as string) === v, [await locator.elementHandle(), name, value] as const);
}

/** The branding element is shown: no hiding style on it or any ancestor, a real size, and nothing drawn over it. */
async function expectVisibleBranding(branding: Locator): Promise<void> {
  await branding.scrollIntoViewIfNeeded();
  const report = await branding.evaluate((el) => {
    const hidden: string[] = [];
    for (let node: Element | null = el; node; node = node.parentElement ?? ((node.getRootNode() as ShadowRoot).host || null)) {
      const s = getComputedStyle(node);
      if (s.display === "none" || s.visibility !== "visible" || Number(s.opacity) === 0) hidden.push(`${node.tagName}.${node.className}`);
    }
    const box = el.getBoundingClientRect();
    const hit = (el.getRootNode() as ShadowRoot).elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
    return { hidden, width: box.width, height: box.height, onTop: !!hit && el.contains(hit), text: el.textContent?.trim() };
  });
  expect(report).toMatchObject({ hidden: [], onTop: true, text: "Powered by chatsvc" });
  expect(report.width).toBeGreaterThan(0);
  expect(report.height).toBeGreaterThan(0);
}

async function expectShownAsText(bubble: Locator, text: string): Promise<void> {
  expect(await bubble.innerText()).toBe(text);
  expect(await bubble.locator("img, b").count()).toBe(0);
}

function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  return errors;
}

/** `chatsvc serve` on an empty folder, as a user would start it. */
async function startServe(): Promise<Serve> {
  const { dir, cleanup } = tempDir();
  const child: ChildProcess = spawn(process.execPath, [join(TEST_CLI_DIR, "cli.js"), "serve", "--port", "0"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const until = Date.now() + 30_000;
  while (!/listening on (http:\/\/127\.0\.0\.1:\d+)/.test(out)) {
    if (Date.now() > until || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`chatsvc serve did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/)![1]!,
    key: out.match(/sk_live_[0-9A-Za-z]{32}/)![0],
    dir,
    async stop() {
      child.kill("SIGTERM");
      await exited;
      cleanup();
    },
  };
}

/** A customer's page on another origin, with CSS that would wreck a widget not isolated from it. */
async function startHostPage(serviceUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const html = `<!doctype html><html><head><title>Shop</title><style>
    * { color: red !important; font-size: 40px !important; }
    button { background: red !important; }
    .svc-branding, .svc-branding * { display: none !important; visibility: hidden !important; }
  </style></head><body><h1>Our shop</h1>
  <script src="${serviceUrl}/widget.js" data-chatbot="demo" async></script></body></html>`;
  const server: Server = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
