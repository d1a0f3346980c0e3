import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/core/config.js";
import type { SyncRound } from "../../src/knowledge/types.js";
import { createChatService, internalsOf, type ChatService } from "../../src/service.js";
import { startHarness, type Harness } from "../support/harness.js";
import { sqlOf } from "../support/sql.js";
import { startTestServer, type TestServer } from "./helpers.js";

/** A page the test server answers with; `status` other than 200 answers that status with no page. */
interface Page {
  body: string;
  type?: string;
  etag?: string;
  lastModified?: string;
  status?: number;
  /** Runs before the page is answered (while the client waits for it). */
  before?: () => Promise<void>;
}

interface Seen {
  path: string;
  status: number;
  ifNoneMatch?: string;
  ifModifiedSince?: string;
}

const DAY = 86_400_000;
const pages = new Map<string, Page>();
const seen: Seen[] = [];
let h: Harness;
let server: TestServer;
const others: ChatService[] = [];

beforeAll(async () => {
  // The page server listens on 127.0.0.1, which URL ingestion refuses unless private networks are allowed.
  h = await startHarness({ ingest: { allowPrivateNetworks: true } });
  server = await startTestServer(async (req, res) => {
    const path = req.url ?? "/";
    const page = pages.get(path);
    await page?.before?.();
    const answer = (status: number, headers: Record<string, string> = {}, body = "") => {
      seen.push({ path, status, ifNoneMatch: req.headers["if-none-match"], ifModifiedSince: req.headers["if-modified-since"] });
      res.writeHead(status, headers).end(body);
    };
    if (!page) return answer(404, { "content-type": "text/plain" }, "not found");
    if (page.status !== undefined && page.status !== 200) return answer(page.status, { "content-type": "text/plain" }, "no page");
    const validators = { ...(page.etag && { etag: page.etag }), ...(page.lastModified && { "last-modified": page.lastModified }) };
    // As servers do: If-None-Match wins over If-Modified-Since.
    const fresh = req.headers["if-none-match"] ? req.headers["if-none-match"] === page.etag : req.headers["if-modified-since"] === page.lastModified && !!page.lastModified;
    if (fresh) return answer(304, validators);
    answer(200, { "content-type": page.type ?? "text/plain", ...validators }, page.body);
  });
});

afterAll(async () => {
  for (const service of others) await service.close();
  await server.close();
  await h.close();
});

const url = (path: string) => `${server.url}${path}`;
const requestsTo = (prefix: string) => seen.filter((s) => s.path.startsWith(prefix));
const sql = () => sqlOf(h.service);

async function newBot(slug: string): Promise<string> {
  await h.service.chatbots.create({ organization_id: h.tenant.organization.id, slug, name: `${slug} bot` });
  return slug;
}

/** Another service on the harness's database, closed after the file. */
async function openAnother(options: Parameters<typeof createChatService>[0] = {}): Promise<ChatService> {
  const service = await createChatService({ env: {}, renderWorker: false, ...options, ...h.database.options });
  others.push(service);
  return service;
}

async function chunkIds(slug: string): Promise<Map<string, number>> {
  const id = (await h.service.chatbots.get(slug)).id;
  return new Map((await internalsOf(h.service).storage.knowledge.chunksOfChatbot(id)).map((c) => [c.content, c.id]));
}

async function botCounts(slug: string) {
  const id = (await h.service.chatbots.get(slug)).id;
  const n = async (query: string) => (await sql().get<{ n: number }>(query, id))!.n;
  return {
    chunks: Number(await n("SELECT count(*) AS n FROM chunks WHERE chatbot_id = ?")),
    vectors: Number(await n("SELECT count(*) AS n FROM chunk_embeddings WHERE chatbot_id = ?")),
  };
}

const fullTextHits = async (slug: string, word: string) =>
  (await internalsOf(h.service).storage.knowledge.fullText((await h.service.chatbots.get(slug)).id, [word], 10)).length;

describe("kb sync: web documents stay fresh", () => {
  it("replaces a changed page (retrieval answers from the new text) and leaves unchanged ones as they are, by 304 or by hash", async () => {
    const bot = await newBot("fresh");
    pages.set("/fresh/refunds", {
      type: "text/html",
      etag: '"v1"',
      body: "<title>Refunds</title><h1>Refunds</h1><p>Refunds are accepted within thirty days through the orchid portal.</p>",
    });
    pages.set("/fresh/shipping", { body: "Parcels ship from Lisbon every weekday morning." });
    pages.set("/fresh/hours", { body: "The support desk opens at nine on weekdays.", lastModified: "Wed, 21 Oct 2026 07:28:00 GMT" });
    const ingested = await h.service.knowledge.ingest(bot, ["/fresh/refunds", "/fresh/shipping", "/fresh/hours"].map(url));
    expect(ingested).toMatchObject({ added: 3, failed: [] });
    const refunds = (await h.service.knowledge.list(bot)).find((d) => d.source === url("/fresh/refunds"))!;
    const before = await chunkIds(bot);

    pages.set("/fresh/refunds", {
      type: "text/html",
      etag: '"v2"',
      body: "<title>Refunds</title><h1>Refunds</h1><p>Refunds are accepted within sixty days through the lotus portal.</p>",
    });
    seen.length = 0;
    const report = await h.service.knowledge.sync(bot);
    expect(report).toMatchObject({ checked: 3, unchanged: 2, updated: [{ id: refunds.id, url: url("/fresh/refunds") }], removed: [], failed: [] });
    expect(report.chunks).toBeGreaterThan(0);
    // Conditional requests with what each server sent: the ETag, else Last-Modified; none for a page that sent neither.
    expect(requestsTo("/fresh/")).toEqual([
      { path: "/fresh/refunds", status: 200, ifNoneMatch: '"v1"', ifModifiedSince: undefined },
      { path: "/fresh/shipping", status: 200, ifNoneMatch: undefined, ifModifiedSince: undefined },
      { path: "/fresh/hours", status: 304, ifNoneMatch: undefined, ifModifiedSince: "Wed, 21 Oct 2026 07:28:00 GMT" },
    ]);

    // Unchanged pages keep their chunks (not re-embedded); the changed page's chunks are new, its old ones gone.
    const after = await chunkIds(bot);
    for (const [content, id] of before) {
      if (content.includes("Lisbon") || content.includes("nine")) expect(after.get(content)).toBe(id);
      else expect(after.has(content)).toBe(false);
    }
    expect([...after.keys()].some((c) => c.includes("sixty days"))).toBe(true);
    expect(await botCounts(bot)).toEqual({ chunks: after.size, vectors: after.size });
    expect(await fullTextHits(bot, "orchid")).toBe(0);
    expect(await fullTextHits(bot, "lotus")).toBe(1);
    const hits = await h.service.knowledge.search(bot, "How many days do I have to ask for a refund?");
    expect(hits[0]!.content).toContain("sixty days");
    expect(hits.some((c) => c.content.includes("thirty"))).toBe(false);
    expect((await h.service.knowledge.list(bot)).map((d) => d.id)).toContain(refunds.id);

    // The new ETag was kept: the next sync gets a 304 and changes nothing.
    seen.length = 0;
    expect(await h.service.knowledge.sync(bot)).toMatchObject({ checked: 3, unchanged: 3, updated: [], chunks: 0 });
    expect(requestsTo("/fresh/refunds")).toEqual([{ path: "/fresh/refunds", status: 304, ifNoneMatch: '"v2"', ifModifiedSince: undefined }]);
  });

  it("removes pages answering 404 or 410, keeps and reports a page answering 500", async () => {
    const bot = await newBot("gone");
    const texts = { a: "Alpha page about marmalade recipes.", b: "Beta page about kayak rentals.", c: "Gamma page about violin lessons.", d: "Delta page about bonsai care." };
    for (const [name, body] of Object.entries(texts)) pages.set(`/gone/${name}`, { body });
    expect(await h.service.knowledge.ingest(bot, ["a", "b", "c", "d"].map((n) => url(`/gone/${n}`)))).toMatchObject({ added: 4 });
    const ids = Object.fromEntries((await h.service.knowledge.list(bot)).map((d) => [d.source.slice(-1), d.id]));

    pages.delete("/gone/a");
    pages.set("/gone/b", { body: "", status: 410 });
    pages.set("/gone/c", { body: "", status: 500 });
    const report = await h.service.knowledge.sync(bot);
    expect(report).toMatchObject({
      checked: 4,
      unchanged: 1,
      updated: [],
      removed: [
        { id: ids.a, url: url("/gone/a"), status: 404 },
        { id: ids.b, url: url("/gone/b"), status: 410 },
      ],
      failed: [{ id: ids.c, url: url("/gone/c"), error: "HTTP 500 Internal Server Error" }],
    });
    expect((await h.service.knowledge.list(bot)).map((d) => d.source)).toEqual([url("/gone/c"), url("/gone/d")]);
    expect(await fullTextHits(bot, "marmalade")).toBe(0);
    expect(await fullTextHits(bot, "kayak")).toBe(0);
    expect(await fullTextHits(bot, "violin")).toBe(1);
    const counts = await botCounts(bot);
    expect(counts.vectors).toBe(counts.chunks);
    expect((await h.service.knowledge.search(bot, "marmalade recipes")).some((c) => c.content.includes("marmalade"))).toBe(false);
  });

  it("does not bring back a document removed while its page was being fetched", async () => {
    const bot = await newBot("race");
    pages.set("/race/page", { body: "Race page about the old ferry timetable." });
    await h.service.knowledge.ingest(bot, [url("/race/page")]);
    const [document] = await h.service.knowledge.list(bot);
    pages.set("/race/page", { body: "Race page about the new ferry timetable.", before: () => h.service.knowledge.remove(bot, document!.id) });
    expect(await h.service.knowledge.sync(bot)).toMatchObject({ checked: 1, updated: [], removed: [], failed: [], chunks: 0 });
    expect(await h.service.knowledge.list(bot)).toEqual([]);
    expect(await botCounts(bot)).toEqual({ chunks: 0, vectors: 0 });
  });

  it("ingests the pages a sitemap index lists, without repeats, up to the bound; sync adds pages listed later", async () => {
    const bot = await newBot("mapped");
    const loc = (path: string) => `<url><loc>${url(path)}</loc></url>`;
    pages.set("/map/index.xml", {
      type: "application/xml",
      body: `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <sitemap><loc>${url("/map/one.xml")}</loc></sitemap><sitemap><loc>${url("/map/two.xml")}</loc></sitemap><sitemap><loc>${url("/map/one.xml")}</loc></sitemap>
      </sitemapindex>`,
    });
    pages.set("/map/one.xml", {
      type: "text/xml; charset=utf-8",
      body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${loc("/map/p1")}${loc("/map/p2?lang=en&amp;v=1")}${loc("/map/p1")}<url><loc>ftp://example.com/x</loc></url></urlset>`,
    });
    pages.set("/map/two.xml", { type: "application/xml", body: `<urlset><url><loc><![CDATA[${url("/map/p3")}]]></loc></url>${loc("/map/p4")}</urlset>` });
    pages.set("/map/p1", { body: "Page one explains lighthouse tours." });
    pages.set("/map/p2?lang=en&v=1", { body: "Page two explains ferry tickets." });
    pages.set("/map/p3", { body: "Page three explains whale watching." });
    pages.set("/map/p4", { body: "Page four explains harbour parking." });

    seen.length = 0;
    const report = await h.service.knowledge.ingest(bot, [url("/map/index.xml")], { sitemapMaxPages: 3 });
    expect(report).toMatchObject({ added: 3, failed: [] });
    expect(report.skipped_inputs).toEqual([
      { input: url("/map/one.xml"), reason: "1 <loc> entries are not http(s) URLs" },
      { input: url("/map/index.xml"), reason: "the sitemap lists more than 3 pages; the first 3 were taken (ingest.sitemapMaxPages)" },
    ]);
    expect((await h.service.knowledge.list(bot)).map((d) => d.source)).toEqual([url("/map/p1"), url("/map/p2?lang=en&v=1"), url("/map/p3")]);
    // Each sitemap and page fetched once; the page past the bound never.
    expect(requestsTo("/map/").map((s) => s.path)).toEqual(["/map/index.xml", "/map/one.xml", "/map/two.xml", "/map/p1", "/map/p2?lang=en&v=1", "/map/p3"]);
    // Sync reads the sitemap again: the page left out (and any listed since) is added; the others are re-fetched like any web page.
    pages.set("/map/two.xml", { type: "application/xml", body: `<urlset>${loc("/map/p3")}${loc("/map/p4")}${loc("/map/p5")}</urlset>` });
    pages.set("/map/p5", { body: "Page five explains the island bus." });
    const synced = await h.service.knowledge.sync(bot);
    expect(synced).toMatchObject({ checked: 3, unchanged: 3, updated: [], removed: [], failed: [] });
    expect(synced.added.map((d) => d.url)).toEqual([url("/map/p4"), url("/map/p5")]);
    expect((await h.service.knowledge.search(bot, "island bus"))[0]!.content).toContain("island bus");
    // A sitemap that is gone is forgotten; its pages stay until they are gone themselves.
    pages.delete("/map/index.xml");
    expect(await h.service.knowledge.sync(bot)).toMatchObject({ checked: 5, added: [], unchanged: 5, removed: [], failed: [] });
    expect(await sql().get("SELECT count(*) AS n FROM web_sitemaps WHERE chatbot_id = ?", (await h.service.chatbots.get(bot)).id)).toEqual({ n: 0 });
  });

  it("applies the address policy to the sitemap, to every page it lists, and to sync", async () => {
    const bot = await newBot("policy");
    pages.set("/policy/sitemap.xml", { type: "application/xml", body: `<urlset><url><loc>${url("/policy/page")}</loc></url></urlset>` });
    pages.set("/policy/page", { body: "Internal page about the staff canteen menu." });
    const file = join(h.dir, "sitemap.xml");
    writeFileSync(file, `<urlset><url><loc>${url("/policy/page")}</loc></url><url><loc>http://localhost:${server.port}/policy/page</loc></url></urlset>`);
    const strict = await openAnother();

    seen.length = 0;
    const refused = await strict.knowledge.ingest(bot, [url("/policy/sitemap.xml"), file]);
    expect(refused).toMatchObject({ added: 0, chunks: 0 });
    expect(refused.failed).toEqual([
      { input: url("/policy/sitemap.xml"), error: "refused: 127.0.0.1 is not a public address (loopback)" },
      { input: url("/policy/page"), error: "refused: 127.0.0.1 is not a public address (loopback)" },
      { input: `http://localhost:${server.port}/policy/page`, error: "refused: localhost is a local name" },
    ]);
    expect(requestsTo("/policy/")).toEqual([]);
    expect(await strict.knowledge.list(bot)).toEqual([]);

    // With the opt-out the same sitemap file ingests the page (the second URL serves the same text: a duplicate).
    expect(await h.service.knowledge.ingest(bot, [file])).toMatchObject({ added: 1, skipped: 1, failed: [] });
    // A service under the policy keeps the page on sync and says why.
    seen.length = 0;
    const report = await strict.knowledge.sync(bot);
    expect(report).toMatchObject({ checked: 1, removed: [], failed: [{ url: url("/policy/page"), error: "refused: 127.0.0.1 is not a public address (loopback)" }] });
    expect(requestsTo("/policy/")).toEqual([]);
    expect(await h.service.knowledge.list(bot)).toHaveLength(1);
  });

  it("runs a background round once across two services sharing the database, then not again until it is due", async () => {
    const bot = await newBot("shared");
    pages.set("/shared/a", { body: "Shared page about glacier hikes.", etag: '"s1"' });
    pages.set("/shared/b", { body: "Shared page about alpine huts." });
    await h.service.knowledge.ingest(bot, [url("/shared/a"), url("/shared/b")]);
    pages.set("/shared/b", { body: "Shared page about alpine huts, open from June." });
    const [one, two] = [await openAnother({ ingest: { allowPrivateNetworks: true } }), await openAnother({ ingest: { allowPrivateNetworks: true } })];

    seen.length = 0;
    const rounds = await Promise.all([one.knowledge.syncAll({ ifOlderThanMs: DAY }), two.knowledge.syncAll({ ifOlderThanMs: DAY })]);
    const ran = rounds.filter((r): r is SyncRound => r !== undefined);
    expect(ran).toHaveLength(1);
    expect(ran[0]!.chatbots.find((c) => c.slug === bot)!.report).toMatchObject({ checked: 2, unchanged: 1, updated: [{ url: url("/shared/b") }] });
    expect(requestsTo("/shared/").map((s) => s.path)).toEqual(["/shared/a", "/shared/b"]);

    // Completed just now: neither instance runs another within the period.
    seen.length = 0;
    expect(await Promise.all([one.knowledge.syncAll({ ifOlderThanMs: DAY }), two.knowledge.syncAll({ ifOlderThanMs: DAY })])).toEqual([undefined, undefined]);
    expect(requestsTo("/shared/")).toEqual([]);
  });

  it("syncs in the background with the syncEvery option, and stops when the service closes", async () => {
    const bot = await newBot("timer");
    pages.set("/timer/a", { body: "Timer page about lantern festivals." });
    await h.service.knowledge.ingest(bot, [url("/timer/a")]);
    pages.set("/timer/a", { body: "Timer page about lantern festivals, now in May." });
    const background = await openAnother({ ingest: { allowPrivateNetworks: true }, syncEvery: "1s" });
    const round = await new Promise<SyncRound>((resolve) => background.knowledge.onSyncRound(resolve));
    expect(round.chatbots.find((c) => c.slug === bot)!.report).toMatchObject({ updated: [{ url: url("/timer/a") }] });
    await background.close();
    expect(await h.service.knowledge.search(bot, "When is the lantern festival?")).toEqual([expect.objectContaining({ content: expect.stringContaining("now in May") })]);
  });

  it("refuses bad input: an unknown chatbot, a bad interval or bound; a chatbot without web documents has nothing to check", async () => {
    await expect(h.service.knowledge.sync("no-such-bot")).rejects.toMatchObject({ status: 404, message: "Chatbot no-such-bot not found" });
    expect(await h.service.knowledge.sync("demo")).toMatchObject({ checked: 0, unchanged: 0, updated: [], removed: [], failed: [] });
    const bot = await newBot("inputs");
    const report = await h.service.knowledge.ingest(bot, ["http://", "not a url at all"]);
    expect(report.failed).toEqual([
      { input: "http://", error: "invalid URL" },
      { input: "not a url at all", error: "no such file or folder" },
    ]);
    await expect(h.service.knowledge.ingest(bot, [url("/map/index.xml")], { sitemapMaxPages: 0 })).rejects.toMatchObject({ status: 422, errors: { sitemapMaxPages: [expect.any(String)] } });
    for (const syncEvery of ["soon", "500ms", "-1h"]) {
      expect(() => resolveConfig({ env: {}, syncEvery })).toThrow(expect.objectContaining({ status: 422, errors: { syncEvery: [expect.stringContaining("at least 1 s")] } }));
    }
    expect(resolveConfig({ env: { CHATSVC_SYNC_EVERY: "24h" } }).syncEveryMs).toBe(DAY);
    expect(resolveConfig({ env: { CHATSVC_SYNC_EVERY: "off" } }).syncEveryMs).toBeNull();
    expect(resolveConfig({ env: { CHATSVC_INGEST_SITEMAP_MAX_PAGES: "50" } }).ingest.sitemapMaxPages).toBe(50);
  });
});
