// The console's "Re-sync web pages" over real HTTP: a page ingested by URL is re-fetched from a real web
// server, changed text replaces it, a page gone (404) is removed, and another organisation is refused.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { addTenant, request, startHarness, type Harness } from "../support/harness.js";

let h: Harness;
let site: Server;
let siteUrl: string;
let page: { status: number; body: string } = { status: 200, body: "<html><head><title>Opening hours</title></head><body><p>We open at nine on weekdays.</p></body></html>" };

beforeAll(async () => {
  site = createServer((_req, res) => res.writeHead(page.status, { "content-type": "text/html; charset=utf-8" }).end(page.body));
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/hours`;
  h = await startHarness({ ingest: { allowPrivateNetworks: true } });
});
afterAll(async () => {
  await h?.close();
  await new Promise((resolve) => site?.close(resolve));
});

async function signIn(email: string): Promise<string> {
  const { token } = await h.service.consoleSessions.createLink(email);
  const res = await consoleCall("api/session", { json: { token } });
  return /chatsvc_console=([^;]*)/.exec(res.headers.get("set-cookie") ?? "")![1]!;
}

function consoleCall(path: string, { cookie, json, method }: { cookie?: string; json?: unknown; method?: string } = {}) {
  const origin = h.server.url;
  return request(`${origin}/console/${path}`, { ...(method && { method }), ...(json !== undefined && { json }), headers: { origin, ...(cookie && { cookie: `chatsvc_console=${cookie}` }) } });
}

it("re-fetches the chatbot's web pages: changed text replaces a page, a page gone is removed; another organisation is refused", async () => {
  const cookie = await signIn("owner@acme.test");
  const added = await consoleCall("api/chatbots/demo/documents", { cookie, json: { url: siteUrl } });
  expect(added.body.data).toMatchObject({ added: 1, failed: [] });
  const sync = () => consoleCall("api/chatbots/demo/sync", { cookie, method: "POST" });

  expect((await sync()).body.data).toMatchObject({ checked: 1, unchanged: 1, updated: [], removed: [], failed: [] });
  page = { status: 200, body: page.body.replace("nine on weekdays", "ten on Saturdays") };
  const changed = (await sync()).body.data;
  expect(changed).toMatchObject({ checked: 1, updated: [{ url: siteUrl }], removed: [] });
  expect((await h.service.knowledge.search("demo", "open Saturdays"))[0]?.url).toBe(siteUrl);
  page = { status: 404, body: "gone" };
  expect((await sync()).body.data).toMatchObject({ removed: [{ url: siteUrl, status: 404 }] });
  expect((await h.service.knowledge.list("demo")).some((d) => d.url === siteUrl)).toBe(false);

  const other = await addTenant(h.service, "Other");
  const theirs = await signIn(other.user.email);
  expect((await consoleCall("api/chatbots/demo/sync", { cookie: theirs, method: "POST" })).status).toBe(403);
  expect((await consoleCall("api/chatbots/demo/sync", { method: "POST" })).status).toBe(401);
});
