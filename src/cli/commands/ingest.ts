import type { Command } from "commander";
import type { IngestProgress, IngestReport } from "../../knowledge/types.js";
import { withService } from "../context.js";
import { parseCount, printJson } from "../output.js";

/**
 * A one-line progress bar redrawn on stderr; only on a terminal, so pipes and
 * `--json` output stay clean.
 */
export function createProgressBar(stream: NodeJS.WriteStream = process.stderr): { update(p: IngestProgress): void; done(): void } {
  if (!stream.isTTY) return { update() {}, done() {} };
  let last = 0;
  let drawn = false;
  return {
    update({ done, total, current }) {
      const now = Date.now();
      // Redrawing thousands of times a second costs more than the ingest itself.
      if (now - last < 80 && done < total) return;
      last = now;
      const width = 24;
      const filled = total === 0 ? width : Math.round((done / total) * width);
      const head = `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total} `;
      const room = Math.max(0, (stream.columns ?? 80) - head.length - 1);
      const label = current.length > room ? `…${current.slice(current.length - room + 1)}` : current;
      stream.write(`\r\x1b[2K${head}${label}`);
      drawn = true;
    },
    done() {
      if (drawn) stream.write("\r\x1b[2K");
    },
  };
}

/** The human summary of an ingest run. */
export function formatIngestReport(slug: string, r: IngestReport): string {
  const lines = [
    `Ingested into "${slug}": ${r.added} added, ${r.updated} updated, ${r.skipped} unchanged or duplicate, ` +
      `${r.skipped_inputs.length} skipped, ${r.failed.length} failed; ${r.chunks} chunks in ${(r.ms / 1000).toFixed(1)} s.`,
    ...r.skipped_inputs.map((s) => `  skipped: ${s.input}: ${s.reason}`),
    ...r.failed.map((f) => `  failed: ${f.input}: ${f.error}`),
  ];
  return `${lines.join("\n")}\n`;
}

export function registerIngest(program: Command): void {
  program
    .command("ingest <slug> <inputs...>")
    .description("Add files, folders (recursively) or URLs to a chatbot's knowledge base: .md .markdown .txt .html .htm .json .pdf")
    .option("--json", "print the report as one JSON object")
    .option("--allow-private-urls", "fetch URLs on private, loopback and other non-public addresses too")
    .option("--sitemap-max-pages <n>", "pages ingested at most from one sitemap URL (default 1000, env CHATSVC_INGEST_SITEMAP_MAX_PAGES)")
    .addHelpText(
      "after",
      "\nUnchanged documents are skipped, changed ones replaced. Empty files, and files of other types inside a folder,\n" +
        "are listed as skipped with the reason. Exits with 1 when any input failed (the others are still ingested).\n" +
        "URLs on private, loopback, link-local (cloud metadata) and reserved addresses are refused, also after a redirect,\n" +
        "unless --allow-private-urls (or CHATSVC_INGEST_ALLOW_PRIVATE=1) is given.\n" +
        "A sitemap.xml URL (or a sitemap index) ingests the pages it lists, each under the same address policy;\n" +
        "pages past --sitemap-max-pages are listed as skipped.",
    )
    .action(async (slug: string, inputs: string[], opts: { json?: boolean; allowPrivateUrls?: boolean; sitemapMaxPages?: string }, cmd: Command) => {
      const sitemapMaxPages = opts.sitemapMaxPages === undefined ? undefined : parseCount(opts.sitemapMaxPages, "--sitemap-max-pages");
      const options = opts.allowPrivateUrls ? { ingest: { allowPrivateNetworks: true } } : {};
      await withService(cmd, async (service) => {
        const bar = createProgressBar();
        let report: IngestReport;
        try {
          report = await service.knowledge.ingest(slug, inputs, { onProgress: (p) => bar.update(p), ...(sitemapMaxPages !== undefined && { sitemapMaxPages }) });
        } finally {
          bar.done();
        }
        opts.json ? printJson(report) : process.stdout.write(formatIngestReport(slug, report));
        if (report.failed.length > 0) process.exitCode = 1;
      }, options);
    });
}
