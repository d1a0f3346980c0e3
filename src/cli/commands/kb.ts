import type { Command } from "commander";
import { withService } from "../context.js";
import type { SyncReport } from "../../knowledge/types.js";
import { parseId, printJson, printTable } from "../output.js";

const DOCUMENT_COLUMNS = ["id", "name", "type", "chunk_count", "bytes", "updated_at", "source"];

export function registerKb(program: Command): void {
  const kb = program.command("kb").description("Inspect and maintain knowledge bases");

  kb.command("list <slug>")
    .description("List a chatbot's documents")
    .option("--json", "print JSON")
    .action(async (slug: string, opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const documents = await service.knowledge.list(slug);
        opts.json ? printJson(documents) : printTable(documents as unknown as Record<string, unknown>[], DOCUMENT_COLUMNS);
      });
    });

  kb.command("remove <slug> <document-id>")
    .description("Remove a document and its chunks from a chatbot's knowledge base")
    .option("--json", "print the result as JSON")
    .action(async (slug: string, documentId: string, opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const id = parseId(documentId, "document id");
        await service.knowledge.remove(slug, id);
        opts.json ? printJson({ removed: id, chatbot: slug }) : process.stdout.write(`Removed document ${id} from "${slug}".\n`);
      });
    });

  kb.command("sync <slug>")
    .description("Re-fetch the chatbot's documents that came from URLs: replace changed pages, remove pages that are gone (404/410)")
    .option("--json", "print the report as one JSON object")
    .option("--allow-private-urls", "fetch URLs on private, loopback and other non-public addresses too")
    .addHelpText(
      "after",
      "\nEach page is asked for with its ETag and Last-Modified; a 304 or the same text leaves it as it is (not re-embedded).\n" +
        "Other failures (5xx, timeouts, refused addresses) keep the document and are reported; the command then exits with 1.",
    )
    .action(async (slug: string, opts: { json?: boolean; allowPrivateUrls?: boolean }, cmd: Command) => {
      const options = opts.allowPrivateUrls ? { ingest: { allowPrivateNetworks: true } } : {};
      await withService(cmd, async (service) => {
        const report = await service.knowledge.sync(slug);
        opts.json ? printJson(report) : process.stdout.write(formatSyncReport(slug, report));
        if (report.failed.length > 0) process.exitCode = 1;
      }, options);
    });

  kb.command("reindex [slug]")
    .description("Re-embed chunks with the configured embedder (all chatbots, or one; after an embedder change, always all)")
    .option("--json", "print the result as JSON")
    .action(async (slug: string | undefined, opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const result = await service.knowledge.reindex(slug);
        opts.json
          ? printJson({ ...result, embedder: service.config.embedModel })
          : process.stdout.write(`Re-embedded ${result.chunks} chunks with "${service.config.embedModel}" in ${(result.ms / 1000).toFixed(1)} s.\n`);
      });
    });
}

/** The human summary of a sync run: counts, then one line per page that changed or failed. */
export function formatSyncReport(slug: string, r: SyncReport): string {
  const lines = [
    `Synced "${slug}": ${r.checked} web documents checked, ${r.added.length} added from sitemaps, ${r.unchanged} unchanged, ${r.updated.length} updated, ` +
      `${r.removed.length} removed, ${r.failed.length} failed; ${r.chunks} chunks in ${(r.ms / 1000).toFixed(1)} s.`,
    ...r.added.map((d) => `  added: ${d.url}`),
    ...r.updated.map((d) => `  updated: ${d.url}`),
    ...r.removed.map((d) => `  removed: ${d.url} (HTTP ${d.status})`),
    ...r.failed.map((d) => `  failed: ${d.url}: ${d.error} (kept)`),
  ];
  return `${lines.join("\n")}\n`;
}
