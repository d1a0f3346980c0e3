import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addTenant, startHarness, type Harness } from "../support/harness.js";
import { makePdf, startPageServer, type PageServer } from "./helpers.js";
import { internalsOf } from "../../src/service.js";
import { sqlOf } from "../support/sql.js";

let h: Harness;
let pages: PageServer | undefined;
// The demo bot starts with chatsvc's docs; these tests need an empty knowledge base.
const BOT = "kb";
beforeEach(async () => {
  // The URL tests' page server listens on 127.0.0.1, which ingestion refuses unless private networks are allowed.
  h = await startHarness({ ingest: { allowPrivateNetworks: true } });
  await h.service.chatbots.create({ organization_id: h.tenant.organization.id, slug: BOT, name: "Knowledge test bot" });
});
afterEach(async () => {
  await pages?.close();
  pages = undefined;
  await h.close();
});

const sql = () => sqlOf(h.service);
const count = async (query: string, ...args: unknown[]) => (await sql().get<{ n: number }>(query, ...args))!.n;
const botId = async () => (await sql().get<{ id: number }>("SELECT id FROM chatbots WHERE slug = ?", BOT))!.id;
const chunkCount = async () => count("SELECT count(*) AS n FROM chunks WHERE chatbot_id = ?", await botId());
const vectorCount = async () => count("SELECT count(*) AS n FROM chunk_embeddings WHERE chatbot_id = ?", await botId());
const chunksOf = async (name: string) =>
  sql().all<{ heading: string; content: string }>(
    "SELECT c.heading, c.content FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.name = ? AND d.chatbot_id = ? ORDER BY c.ordinal",
    name,
    await botId(),
  );
/** Full-text matches of a word among the chatbot's chunks, through the engine's own index. */
const fullTextHits = async (word: string) => (await internalsOf(h.service).storage.knowledge.fullText(await botId(), [word], 10)).length;
const hasKnowledgeBase = async () => (await h.call(`/chatbots/${BOT}`)).body.data.has_knowledge_base;

function write(path: string, content: string | Buffer): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
  return path;
}

describe("ingesting files and folders", () => {
  it("reads every supported type in a folder tree and reports bad inputs one by one", async () => {
    const docs = join(h.dir, "docs");
    write(join(docs, "guide.md"), "# Install\nRun npm install chatsvc.\n\n## Configure\nSet CHATSVC_DB to choose the database file.\n");
    write(join(docs, "notes.markdown"), "# Release notes\nVersion one ships the ingest command.\n");
    write(join(docs, "plain.txt"), "Plain text about the office opening hours: nine to five.\n");
    write(join(docs, "page.html"), "<html><head><title>Pricing page</title><script>var tracking = 1;</script></head><body><nav>Home | Blog</nav><h1>Pricing</h1><p>The pro plan costs 20 EUR.</p></body></html>");
    write(join(docs, "legacy.htm"), "<h1>Legacy</h1><p>Old browsers are not supported.</p>");
    write(join(docs, "faq.json"), JSON.stringify([{ question: "Do you ship abroad?", answer: "Yes, to 40 countries." }]));
    write(join(docs, "manual.pdf"), makePdf(["Warranty lasts two years.", "Keep the receipt."]));
    write(join(docs, "nested", "deep", "more.md"), "# Deep\nNested folders are read too.\n");
    write(join(docs, "logo.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    write(join(docs, ".hidden", "secret.md"), "# Secret\nHidden folders are skipped.\n");
    const png = write(join(h.dir, "picture.png"), Buffer.from([1, 2, 3]));
    const badJson = write(join(h.dir, "broken.json"), "{ not json");
    const binaryTxt = write(join(h.dir, "binary.txt"), Buffer.from([0x41, 0x00, 0x42]));
    const badPdf = write(join(h.dir, "fake.pdf"), "not a pdf at all");

    expect(await hasKnowledgeBase()).toBe(false);
    const progress: number[] = [];
    const report = await h.service.knowledge.ingest(BOT, [docs, png, badJson, binaryTxt, badPdf, join(h.dir, "missing.md")], {
      onProgress: (p) => progress.push(p.done),
    });

    expect(report.added).toBe(8);
    expect(report.updated + report.skipped).toBe(0);
    expect(report.chunks).toBe(await chunkCount());
    // The folder's file of another type is listed, not silently dropped; a hidden folder stays unlisted.
    expect(report.skipped_inputs.map((s) => [s.input.replace(h.dir, ""), s.reason])).toEqual([
      ["/docs/logo.png", expect.stringContaining('unsupported file type ".png"; supported: .md')],
    ]);
    expect(report.failed.map((f) => [f.input.replace(h.dir, ""), f.error])).toEqual([
      ["/missing.md", "no such file or folder"],
      ["/picture.png", expect.stringContaining('unsupported file type ".png"')],
      ["/broken.json", expect.stringContaining("invalid JSON")],
      ["/binary.txt", expect.stringContaining("not a text file")],
      ["/fake.pdf", expect.stringContaining("not a readable PDF")],
    ]);
    expect(progress.at(-1)).toBe(12);
    expect(await hasKnowledgeBase()).toBe(true);

    const listed = await h.service.knowledge.list(BOT);
    expect(listed.map((d) => d.name).sort()).toEqual(["faq.json", "guide.md", "legacy.htm", "manual.pdf", "more.md", "notes.markdown", "page.html", "plain.txt"]);
    expect(listed.every((d) => d.type === "file" && d.url === null && d.source.startsWith(docs) && d.chunk_count > 0 && d.bytes > 0)).toBe(true);

    expect((await chunksOf("guide.md"))).toEqual([
      { heading: "Install", content: "Run npm install chatsvc." },
      { heading: "Install > Configure", content: "Set CHATSVC_DB to choose the database file." },
    ]);
    expect((await chunksOf("page.html"))).toEqual([{ heading: "Pricing", content: "The pro plan costs 20 EUR." }]);
    expect((await chunksOf("faq.json"))).toEqual([{ heading: "Do you ship abroad?", content: "question: Do you ship abroad?\nanswer: Yes, to 40 countries." }]);
    expect((await chunksOf("manual.pdf"))).toEqual([{ heading: "", content: "Warranty lasts two years. Keep the receipt." }]);
    expect((await chunksOf("plain.txt"))[0]!.heading).toBe("");
    // Every chunk has exactly one vector.
    expect((await vectorCount())).toBe(report.chunks);

    const [hit] = await h.service.knowledge.search(BOT, "How long does the warranty last?");
    expect(hit).toMatchObject({ name: "manual.pdf", type: "file", url: null });
    expect(hit!.score).toBeGreaterThan(0);
    expect(hit!.score).toBeLessThanOrEqual(1);
  });

  it("skips empty files with a note instead of failing, of every type, in a folder or named, and goes on", async () => {
    const docs = join(h.dir, "mixed");
    write(join(docs, "empty.md"), "");
    write(join(docs, "blank.txt"), "\uFEFF \n\t\n");
    write(join(docs, "empty.json"), "");
    write(join(docs, "empty.pdf"), "");
    write(join(docs, "real.md"), "# Real\nThis one has text.\n");
    const named = write(join(h.dir, "named-empty.html"), "\n");

    const report = await h.service.knowledge.ingest(BOT, [docs, named, { name: "pasted", content: "  " }]);

    expect(report).toMatchObject({ added: 1, failed: [] });
    const empty = "empty: no text to index";
    expect(report.skipped_inputs.map((s) => [s.input.replace(h.dir, ""), s.reason])).toEqual([
      ["/mixed/blank.txt", empty],
      ["/mixed/empty.json", empty],
      ["/mixed/empty.md", empty],
      ["/mixed/empty.pdf", empty],
      ["/named-empty.html", empty],
      ["pasted", empty],
    ]);
    expect(await (await h.service.knowledge.list(BOT)).map((d) => d.name)).toEqual(["real.md"]);
  });

  it("skips unchanged documents and duplicates, and replaces a changed one's chunks", async () => {
    const file = write(join(h.dir, "policy.md"), "# Refunds\nRefunds are paid within 30 days of the request.\n");
    expect(await h.service.knowledge.ingest(BOT, [file])).toMatchObject({ added: 1, updated: 0, skipped: 0, chunks: 1 });
    const [first] = await h.service.knowledge.list(BOT);

    expect(await h.service.knowledge.ingest(BOT, [file])).toMatchObject({ added: 0, updated: 0, skipped: 1, chunks: 0 });
    const copy = join(h.dir, "copy-of-policy.md");
    copyFileSync(file, copy);
    expect(await h.service.knowledge.ingest(BOT, [copy])).toMatchObject({ added: 0, skipped: 1 });
    // The same file twice in one run is stored once.
    const twin = write(join(h.dir, "twin", "a.md"), "# Twin\nSame words.\n");
    write(join(h.dir, "twin", "b.md"), "# Twin\nSame words.\n");
    expect(await h.service.knowledge.ingest(BOT, [join(h.dir, "twin"), twin])).toMatchObject({ added: 1, skipped: 2 });

    write(file, "# Refunds\nRefunds are now paid within 14 days.\n\n# Exchanges\nExchanges are free of charge.\n");
    expect(await h.service.knowledge.ingest(BOT, [file])).toMatchObject({ added: 0, updated: 1, skipped: 0, chunks: 2 });
    const updated = await (await h.service.knowledge.list(BOT)).find((d) => d.name === "policy.md")!;
    expect(updated).toMatchObject({ id: first!.id, chunk_count: 2, created_at: first!.created_at });
    expect((await chunksOf("policy.md")).map((c) => c.content)).toEqual(["Refunds are now paid within 14 days.", "Exchanges are free of charge."]);
    // The old text is gone from the full-text index and from the vectors.
    expect(await fullTextHits("30")).toBe(0);
    expect((await vectorCount())).toBe((await chunkCount()));
  });

  it("removes a document with its chunks, index rows and vectors", async () => {
    await h.service.knowledge.ingest(BOT, [{ name: "hours", content: "# Opening hours\nWe open at nine and close at five." }]);
    const [doc] = await h.service.knowledge.list(BOT);
    expect(doc).toMatchObject({ name: "hours", type: "text", source: "text:hours" });
    expect(await hasKnowledgeBase()).toBe(true);
    // Searched once with chunks: the search then no longer asks whether the chatbot has any.
    expect((await h.service.knowledge.search(BOT, "When do you open?")).length).toBeGreaterThan(0);

    await h.service.knowledge.remove(BOT, doc!.id);
    expect(await h.service.knowledge.list(BOT)).toEqual([]);
    expect((await chunkCount())).toBe(0);
    expect((await vectorCount())).toBe(0);
    expect(await fullTextHits("nine")).toBe(0);
    expect(await hasKnowledgeBase()).toBe(false);
    expect(await h.service.knowledge.search(BOT, "When do you open?")).toEqual([]);
    await expect(h.service.knowledge.remove(BOT, doc!.id)).rejects.toThrow(expect.objectContaining({ status: 404 }));
  });

  it("keeps chatbots apart, and deleting a chatbot deletes its vectors", async () => {
    const other = await addTenant(h.service);
    await h.service.knowledge.ingest(BOT, [{ name: "a", content: "The demo bot knows about purple elephants." }]);
    await h.service.knowledge.ingest(other.chatbot.slug, [{ name: "b", content: "The other bot knows about orange giraffes." }]);
    expect((await h.service.knowledge.search(BOT, "orange giraffes")).length).toBe(0);
    expect((await h.service.knowledge.search(other.chatbot.slug, "orange giraffes"))[0]!.name).toBe("b");
    expect(await (await h.service.knowledge.list(other.chatbot.slug)).map((d) => d.name)).toEqual(["b"]);
    // A document id of another chatbot is not found through this one.
    await expect(h.service.knowledge.remove(BOT, (await h.service.knowledge.list(other.chatbot.slug))[0]!.id)).rejects.toThrow(expect.objectContaining({ status: 404 }));

    const vectorsOf = async (id: number) => count("SELECT count(*) AS n FROM chunk_embeddings WHERE chatbot_id = ?", id);
    expect(await vectorsOf(other.chatbot.id)).toBe(1);
    await h.service.chatbots.delete(other.chatbot.slug);
    expect(await vectorsOf(other.chatbot.id)).toBe(0);
    expect((await vectorCount())).toBe(1);
    await expect(h.service.knowledge.list("nope")).rejects.toThrow(expect.objectContaining({ status: 404 }));
  });
});

describe("ingesting URLs", () => {
  it("reads pages by content type, names HTML by its title and keeps the URL for sources", async () => {
    pages = await startPageServer({
      "/help/refunds": [
        "text/html; charset=utf-8",
        `<html><head><title>Refund policy</title><style>.x{}</style></head><body>
          <nav><a href="/">Home</a> <a href="/shop">Shop</a></nav>
          <article><h1>Refunds</h1><p>Refunds reach your card within 5 business days.</p></article>
          <footer>Copyright Acme</footer><script>track()</script></body></html>`,
      ],
      "/notes.md": ["text/markdown", "# Changelog\nAdded dark mode."],
      "/guide.pdf": ["application/pdf", makePdf(["The PDF guide explains setup."])],
      "/data": ["application/json", JSON.stringify({ support: { email: "help@acme.test" } })],
      "/image": ["image/png", Buffer.from([1, 2, 3])],
    });
    const report = await h.service.knowledge.ingest(BOT, [
      `${pages.url}/help/refunds`,
      `${pages.url}/notes.md`,
      `${pages.url}/guide.pdf`,
      `${pages.url}/data`,
      `${pages.url}/missing`,
      `${pages.url}/image`,
    ]);
    expect(report).toMatchObject({ added: 4 });
    expect(report.failed).toEqual([
      { input: `${pages.url}/missing`, error: expect.stringMatching(/^HTTP 404/) },
      { input: `${pages.url}/image`, error: 'unsupported content type "image/png"' },
    ]);
    const docs = await h.service.knowledge.list(BOT);
    expect(docs.map((d) => [d.name, d.type, d.url])).toEqual([
      ["Refund policy", "url", `${pages.url}/help/refunds`],
      ["notes.md", "url", `${pages.url}/notes.md`],
      ["guide.pdf", "url", `${pages.url}/guide.pdf`],
      ["data", "url", `${pages.url}/data`],
    ]);
    expect((await chunksOf("Refund policy"))).toEqual([{ heading: "Refunds", content: "Refunds reach your card within 5 business days." }]);
    expect((await chunksOf("notes.md"))).toEqual([{ heading: "Changelog", content: "Added dark mode." }]);

    const [hit] = await h.service.knowledge.search(BOT, "How long until my refund reaches the card?");
    expect(hit).toMatchObject({ name: "Refund policy", type: "url", url: `${pages.url}/help/refunds`, heading: "Refunds" });

    // Re-ingesting a changed page updates it in place.
    pages.pages.set("/notes.md", ["text/markdown", "# Changelog\nAdded dark mode and keyboard shortcuts."]);
    expect(await h.service.knowledge.ingest(BOT, [`${pages.url}/notes.md`, `${pages.url}/help/refunds`])).toMatchObject({ updated: 1, skipped: 1 });
  });
});

describe("search", () => {
  it("never throws on odd user text and respects k", async () => {
    const content = Array.from({ length: 12 }, (_, i) => `## Topic ${i}\nThe chatbot answers question number ${i} about API keys and webhooks.`).join("\n\n");
    await h.service.knowledge.ingest(BOT, [{ name: "topics", content }]);
    const odd = ['"', 'AND OR NOT "api" NEAR(a b)', "api* ^key", "column:content", "🙂🚀", "", "   ", "x".repeat(10_000), "api ".repeat(2_500), "'; DROP TABLE chunks; --", "\u0000\uD800"];
    for (const text of odd) {
      const hits = await h.service.knowledge.search(BOT, text);
      expect(Array.isArray(hits)).toBe(true);
      for (const hit of hits) expect(hit.score).toBeGreaterThanOrEqual(0);
    }
    expect((await h.service.knowledge.search(BOT, "API keys and webhooks", { k: 3 })).length).toBe(3);
    expect((await h.service.knowledge.search(BOT, "API keys and webhooks", { k: 50 })).length).toBe(12);
    expect((await chunkCount())).toBe(12);
  });

  it("returns nothing for a chatbot without knowledge", async () => {
    expect(await h.service.knowledge.search(BOT, "anything at all")).toEqual([]);
    expect(await h.service.knowledge.hasKnowledge((await h.service.chatbots.get(BOT)).id)).toBe(false);
  });
});
