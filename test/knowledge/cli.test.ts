import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it as base } from "vitest";
import { inCliWorkspace, runCli, type CliResult } from "../support/cli.js";
import { startTestServer } from "./helpers.js";

/** One test's own folder and database, so that the tests can run at the same time. */
interface Workspace {
  dir: string;
  cli(args: string[], env?: Record<string, string>): Promise<CliResult>;
  /**
   * What the test starts from, made through the library: an organisation with an empty `demo` chatbot (and with
   * `document`, one document embedded by the default embedder). `init` itself is run by the first test only.
   */
  setUp(document?: { name: string; content: string }): Promise<void>;
}

const it = base.extend<{ ws: Workspace }>({
  ws: async ({}, use) =>
    inCliWorkspace(({ dir, cli, withService }) =>
      use({
        dir,
        cli,
        setUp: (document) =>
          withService(async (service) => {
            const org = await service.orgs.create({ name: "Acme" });
            await service.chatbots.create({ organization_id: org.id, slug: "demo", name: "Demo" });
            if (document) await service.knowledge.ingest("demo", [document]);
          }),
      }),
    ),
});

// Runs the real binary several times per test; on a loaded 2-core machine a spawn can take seconds. The tests share
// nothing, so they run at the same time, and so do the commands within a test whose order does not matter.
describe.concurrent("chatsvc ingest and kb", { timeout: 60_000 }, () => {
  it("ingests a folder, lists, removes and reindexes, with --json printing one object", async ({ expect, ws: { cli, dir } }) => {
    expect((await cli(["init", "--json"])).json().knowledge).toMatchObject({ documents: 10 });
    const docs = join(dir, "docs");
    mkdirSync(docs);
    writeFileSync(join(docs, "a.md"), "# Alpha\nAlpha text about refunds.\n");
    writeFileSync(join(docs, "b.txt"), "Beta text about shipping.\n");

    const ingested = await cli(["ingest", "demo", docs, "--json"]);
    expect(ingested.code).toBe(0);
    // Not a terminal: no progress bar on stderr.
    expect(ingested.stderr).toBe("");
    expect(ingested.json()).toMatchObject({ added: 2, updated: 0, skipped: 0, skipped_inputs: [], failed: [], chunks: 2, ms: expect.any(Number) });

    // Ingesting the same files again changes no document, so the listings run beside it.
    const [human, listedJson, table] = await Promise.all([
      cli(["ingest", "demo", docs, join(dir, "missing.md")]),
      cli(["kb", "list", "demo", "--json"]),
      cli(["kb", "list", "demo"]),
    ]);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/^Ingested into "demo": 0 added, 0 updated, 2 unchanged or duplicate, 0 skipped, 1 failed; 0 chunks in \d+\.\d s\.\n  failed: .*missing\.md: no such file or folder\n$/);

    const listed = listedJson.json() as { id: number; name: string }[];
    expect(listed.map((d) => d.name)).toEqual(expect.arrayContaining(["a.md", "b.txt", "quick-start.md"]));
    expect(table.stdout.split("\n")[0]).toMatch(/^id\s+name\s+type\s+chunk_count\s+bytes\s+updated_at\s+source$/);

    const target = listed.find((d) => d.name === "a.md")!;
    expect((await cli(["kb", "remove", "demo", String(target.id), "--json"])).json()).toEqual({ removed: target.id, chatbot: "demo" });
    // Reindexing re-embeds chunks and leaves the documents as they are, so the second removal runs beside it.
    const [again, reindexedJson] = await Promise.all([cli(["kb", "remove", "demo", String(target.id)]), cli(["kb", "reindex", "--json"])]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/^error: Document \d+ not found/);

    const reindexed = reindexedJson.json();
    expect(reindexed).toMatchObject({ embedder: "hash", chunks: expect.any(Number) });
    expect(reindexed.chunks).toBeGreaterThan(1);
    expect((await cli(["kb", "reindex", "demo"])).stdout).toMatch(/^Re-embedded \d+ chunks with "hash" in \d+\.\d s\.\n$/);
  });

  it("lists a folder's unsupported files and empty files as skipped, with the reason, and exits 0", async ({ expect, ws: { cli, dir, setUp } }) => {
    await setUp();
    const docs = join(dir, "docs");
    mkdirSync(docs);
    writeFileSync(join(docs, "guide.md"), "# Guide\nHow to return an order.\n");
    writeFileSync(join(docs, "empty.md"), "");
    writeFileSync(join(docs, "diagram.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]));

    const human = await cli(["ingest", "demo", docs]);
    expect(human.code).toBe(0);
    expect(human.stdout.split("\n")).toEqual([
      expect.stringMatching(/^Ingested into "demo": 1 added, 0 updated, 0 unchanged or duplicate, 2 skipped, 0 failed; 1 chunks in \d+\.\d s\.$/),
      `  skipped: ${join(docs, "diagram.png")}: unsupported file type ".png"; supported: .md, .markdown, .txt, .html, .htm, .json, .pdf`,
      `  skipped: ${join(docs, "empty.md")}: empty: no text to index`,
      "",
    ]);

    writeFileSync(join(docs, "notes.txt"), "");
    const json = await cli(["ingest", "demo", docs, "--json"]);
    expect(json.code).toBe(0);
    expect(json.json()).toMatchObject({
      added: 0,
      skipped: 1,
      failed: [],
      skipped_inputs: [
        { input: join(docs, "diagram.png"), reason: expect.stringContaining('unsupported file type ".png"') },
        { input: join(docs, "empty.md"), reason: "empty: no text to index" },
        { input: join(docs, "notes.txt"), reason: "empty: no text to index" },
      ],
    });
  });

  it("ingests a folder of many files, read and embedded in the ingestion worker beside the built CLI, as a folder of a few", async ({ expect, ws: { cli, dir, setUp } }) => {
    await setUp();
    const docs = join(dir, "many");
    mkdirSync(docs);
    for (let i = 0; i < 70; i++) writeFileSync(join(docs, `page-${String(i).padStart(2, "0")}.md`), `# Page ${i}\nWhat page ${i} says about returns.\n`);
    writeFileSync(join(docs, "broken.json"), "{ not json");

    const ingested = await cli(["ingest", "demo", docs, "--json"]);
    expect(ingested.code).toBe(1);
    expect(ingested.json()).toMatchObject({ added: 70, skipped: 0, chunks: 70, failed: [{ input: join(docs, "broken.json"), error: expect.stringContaining("invalid JSON") }] });
    // Listing reads what the first run stored whatever the second (which stores nothing) is doing.
    const [again, listedJson] = await Promise.all([cli(["ingest", "demo", docs, "--json"]), cli(["kb", "list", "demo", "--json"])]);
    expect(again.json()).toMatchObject({ added: 0, skipped: 70, chunks: 0 });
    const listed = listedJson.json() as { name: string; chunk_count: number }[];
    expect(listed.map((d) => d.name)).toEqual(Array.from({ length: 70 }, (_, i) => `page-${String(i).padStart(2, "0")}.md`));
  });

  it("refuses an embedder switch without reindex, naming the command", async ({ expect, ws: { cli, dir, setUp } }) => {
    await setUp({ name: "hours.md", content: "Opening hours\n\nThe shop opens at nine." });
    const [res, unknown] = await Promise.all([
      cli(["ingest", "demo", join(dir)], { CHATSVC_EMBED_MODEL: "ollama:nomic-embed-text", OLLAMA_HOST: "http://127.0.0.1:9" }),
      cli(["ingest", "nope", dir]),
    ]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain("chatsvc kb reindex");
    expect(unknown.stderr).toMatch(/^error: Chatbot nope not found/);
  });

  it("refuses loopback URLs unless --allow-private-urls or CHATSVC_INGEST_ALLOW_PRIVATE=1 opts in", async ({ expect, ws: { cli, setUp } }) => {
    await setUp();
    const pages = await startTestServer((req, res) => res.writeHead(200, { "content-type": "text/plain" }).end(`Intranet page ${req.url} about the canteen menu.`));
    try {
      const refused = await cli(["ingest", "demo", `${pages.url}/a`, "--json"]);
      expect(refused.code).toBe(1);
      expect(refused.json()).toMatchObject({ added: 0, failed: [{ input: `${pages.url}/a`, error: "refused: 127.0.0.1 is not a public address (loopback)" }] });
      expect(pages.hits).toBe(0);

      // Each opt-in fetches a page of its own.
      const [flag, env, invalid] = await Promise.all([
        cli(["ingest", "demo", `${pages.url}/a`, "--allow-private-urls", "--json"]),
        cli(["ingest", "demo", `${pages.url}/b`, "--json"], { CHATSVC_INGEST_ALLOW_PRIVATE: "1" }),
        cli(["ingest", "demo", `${pages.url}/c`], { CHATSVC_INGEST_ALLOW_PRIVATE: "maybe" }),
      ]);
      expect(flag.json()).toMatchObject({ added: 1, failed: [] });
      expect(env.json()).toMatchObject({ added: 1, failed: [] });
      expect(invalid.code).not.toBe(0);
      expect(invalid.stderr).toContain("ingest.allowPrivateNetworks must be a boolean");
    } finally {
      await pages.close();
    }
  });

  it("kb sync re-fetches web documents and reports what changed; a failed page exits 1; sitemaps ingest with a bound", async ({ expect, ws: { cli, setUp } }) => {
    await setUp();
    const texts = new Map([
      ["/a", "Page a about the rooftop garden."],
      ["/b", "Page b about the bicycle shed."],
      ["/c", "Page c about the library hours."],
    ]);
    const pages = await startTestServer((req, res) => {
      if (req.url === "/sitemap.xml") return res.writeHead(200, { "content-type": "application/xml" }).end(`<urlset>${[...texts.keys()].map((p) => `<url><loc>http://127.0.0.1:${pages.port}${p}</loc></url>`).join("")}</urlset>`);
      const text = texts.get(req.url ?? "");
      if (text === "broken") return res.writeHead(500).end();
      text === undefined ? res.writeHead(404).end() : res.writeHead(200, { "content-type": "text/plain" }).end(text);
    });
    try {
      const ingested = await cli(["ingest", "demo", `${pages.url}/sitemap.xml`, "--sitemap-max-pages", "2", "--allow-private-urls", "--json"]);
      expect(ingested.json()).toMatchObject({ added: 2, skipped_inputs: [{ input: `${pages.url}/sitemap.xml`, reason: expect.stringContaining("more than 2 pages") }] });

      texts.set("/a", "Page a about the rooftop garden, closed in winter.");
      texts.delete("/b");
      const synced = await cli(["kb", "sync", "demo", "--json", "--allow-private-urls"]);
      expect(synced.code).toBe(0);
      // The sitemap is read again: /c, left out by the bound, is added.
      expect(synced.json()).toMatchObject({
        checked: 2,
        added: [{ url: `${pages.url}/c` }],
        unchanged: 0,
        updated: [{ url: `${pages.url}/a` }],
        removed: [{ url: `${pages.url}/b`, status: 404 }],
        failed: [],
      });

      texts.set("/a", "broken");
      const [human, unknown] = await Promise.all([cli(["kb", "sync", "demo", "--allow-private-urls"]), cli(["kb", "sync", "nope"])]);
      expect(human.code).toBe(1);
      expect(human.stdout).toMatch(
        /^Synced "demo": 2 web documents checked, 0 added from sitemaps, 1 unchanged, 0 updated, 0 removed, 1 failed; 0 chunks in \d+\.\d s\.\n {2}failed: http:\/\/127\.0\.0\.1:\d+\/a: HTTP 500 Internal Server Error \(kept\)\n$/,
      );
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toMatch(/^error: Chatbot nope not found/);
    } finally {
      await pages.close();
    }
  });
});
