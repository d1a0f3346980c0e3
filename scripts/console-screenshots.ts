// Screenshots of the operator console for the README: docs/images/console-*.png.
// Usage: npx tsx scripts/console-screenshots.ts   (needs Chromium: /usr/bin/chromium or CHATSVC_CHROMIUM, and a built
// console bundle: npm run build). Starts a throwaway service in a temp folder, fills it through the API, and photographs
// each page in light mode at 1280 px, plus the Overview in dark mode and at 390 px.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Page } from "playwright-core";
import { startServer } from "../src/http/server.js";
import { createChatService } from "../src/service.js";

const OUT = join(import.meta.dirname, "..", "docs", "images");
const dir = mkdtempSync(join(tmpdir(), "chatsvc-shots-"));
const service = await createChatService({ db: join(dir, "shots.db"), env: {}, logLevel: "error", webhooks: { allowPrivateNetworks: true } });
const { key } = await service.bootstrap({ organizationName: "Acme Robotics", email: "ops@acme.example" });
const server = await startServer(service, { port: 0 });
// A receiver that fails, so the Webhooks page has a last failure to show.
const receiver = createServer((_req, res) => res.writeHead(500).end()).listen(0, "127.0.0.1");
await new Promise((resolve) => receiver.once("listening", resolve));

const api = async (path: string, json?: unknown) => {
  const res = await fetch(`${server.url}/api/v1${path}`, {
    method: json === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  return (await res.json()) as { data: any };
};

const visitors = ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson", "Linus T."];
const questions = ["How do I create an API key?", "How do I put the widget on my site?", "What is the refund policy for hardware?", "Can I run several instances?", "Which databases are supported?"];
for (const [i, name] of visitors.entries()) {
  const conversation = (await api("/chatbots/demo/conversations", { visitor_name: name })).data.conversation_id;
  const reply = (await api(`/chatbots/demo/conversations/${conversation}/messages`, { message: questions[i] })).data;
  await api(`/chatbots/demo/conversations/${conversation}/messages/rate`, { message_id: reply.message_id, rating: reply.cannot_answer ? "bad" : "good" });
  if (i % 2 === 0) await api(`/chatbots/demo/conversations/${conversation}/leads`, { name, email: `${name.split(" ")[0]!.toLowerCase()}@example.com` });
  if (i === 1) await api(`/conversations/${conversation}/end`, {});
}
await api("/webhooks", { url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`, name: "CRM", events: ["lead_captured", "conversation_ended"] });
await api("/chatbots/demo/corrections", { question: "What is the refund policy for hardware?", answer: "Hardware can be returned within **30 days** for a full refund.", source_name: "Refund policy" });
await service.keys.create({ email: "ops@acme.example", name: "staging", accept_attribution: true });
await service.chatbots.create({ organization_id: 1, slug: "sales", name: "Sales assistant", is_active: false });

const browser = await chromium.launch({ executablePath: process.env.CHATSVC_CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
async function open(colorScheme: "light" | "dark", width: number, height: number): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width, height }, colorScheme, deviceScaleFactor: 1 })).newPage();
  const { token } = await service.consoleSessions.createLink("ops@acme.example");
  await page.goto(`${server.url}/console/#/sign-in/${token}`);
  await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
  return page;
}
async function shoot(page: Page, route: string, heading: string | RegExp, name: string, fullPage = false): Promise<void> {
  await page.goto(`${server.url}/console/#/${route}`);
  await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
  await page.waitForLoadState("networkidle");
  await page.locator(".loading").waitFor({ state: "detached" }).catch(() => {});
  await page.screenshot({ path: join(OUT, `console-${name}.png`), fullPage });
  console.log(`docs/images/console-${name}.png`);
}

try {
  const light = await open("light", 1280, 860);
  await shoot(light, "overview", "Overview", "overview");
  await shoot(light, "chatbots/demo", /chatsvc assistant|Demo/i, "chatbot");
  await shoot(light, "knowledge/demo", "Knowledge", "knowledge");
  await shoot(light, "conversations", "Conversations", "conversations");
  await shoot(light, "conversations/1", "Conversation 1", "transcript");
  await shoot(light, "leads", "Leads", "leads");
  await shoot(light, "corrections/demo", "Corrections", "corrections");
  await shoot(light, "webhooks", "Webhooks", "webhooks");
  await shoot(light, "keys", "API keys", "keys");
  await shoot(await open("dark", 1280, 860), "overview", "Overview", "overview-dark");
  await shoot(await open("light", 390, 844), "conversations", "Conversations", "mobile");
} finally {
  await browser.close();
  receiver.close();
  await server.close();
  await service.close();
  rmSync(dir, { recursive: true, force: true });
}
