import { nowIso } from "../core/clock.js";
import { chunkText } from "./chunking/index.js";
import { contentHash, ingest, writeDocuments, type IngestDeps } from "./ingest.js";
import { fetchUrl, LoadError, type FetchedUrl } from "./loaders/index.js";
import { sitemapPages } from "./sitemap-pages.js";
import type { SyncReport } from "./types.js";

/** Statuses that say a page is gone for good; any other failure keeps the document. */
const GONE = new Set([404, 410]);

/**
 * Re-fetches every document of a chatbot that came from a URL and brings it
 * up to date, one document at a time (after reading its sitemaps again, see
 * {@link addListedPages}): a conditional request first (its
 * `ETag` and `Last-Modified`), then the content hash, so an unchanged page is
 * never re-embedded. A changed page is re-chunked, re-embedded and replaced
 * in one storage write (its old chunks, full text and vectors go in the same
 * transaction); a page answering 404 or 410 is removed; any other failure
 * (5xx, timeouts, refused addresses, pages now empty) keeps the document and
 * is reported. Stops between documents once `signal` is aborted.
 *
 * @example
 * const report = await syncChatbot(deps, bot.id);
 * console.log(report.updated.length, "pages changed");
 */
export async function syncChatbot(deps: IngestDeps, chatbotId: number, { signal }: { signal?: AbortSignal } = {}): Promise<SyncReport> {
  const { store, vectors, embedder, chunking, fetching } = deps;
  const started = performance.now();
  const report: SyncReport = { checked: 0, added: [], unchanged: 0, updated: [], removed: [], failed: [], chunks: 0, ms: 0 };
  const model = embedder();
  await vectors.assertCompatible(model.spec);

  await addListedPages(deps, chatbotId, report, signal);
  const justAdded = new Set(report.added.map((d) => d.id));
  for (const document of await store.webDocuments(chatbotId)) {
    if (signal?.aborted) break;
    if (justAdded.has(document.id)) continue;
    report.checked++;
    const entry = { id: document.id, url: document.source };
    let fetched: FetchedUrl;
    try {
      fetched = await fetchUrl(document.source, fetching, { validators: { etag: document.etag, last_modified: document.last_modified } });
    } catch (error) {
      if (!(error instanceof LoadError)) throw error;
      if (error.status !== undefined && GONE.has(error.status)) {
        if (await store.removeDocument(chatbotId, document.id)) report.removed.push({ ...entry, status: error.status });
      } else report.failed.push({ ...entry, error: error.message });
      continue;
    }
    const fetchedAt = nowIso();
    if (fetched.kind === "not-modified") {
      await store.markFetched(chatbotId, document.id, { ...fetched.validators, fetched_at: fetchedAt });
      report.unchanged++;
      continue;
    }
    if (fetched.kind === "sitemap") {
      report.failed.push({ ...entry, error: "the page is now a sitemap; ingest it to add the pages it lists" });
      continue;
    }
    const { doc } = fetched;
    const hash = contentHash(doc.text);
    if (hash === document.content_hash) {
      await store.markFetched(chatbotId, document.id, { ...doc.web, fetched_at: fetchedAt });
      report.unchanged++;
      continue;
    }
    const chunks = doc.text.trim() === "" ? [] : chunkText(doc.format, doc.text, chunking);
    if (chunks.length === 0) {
      report.failed.push({ ...entry, error: "the page has no text now; kept the stored version" });
      continue;
    }
    // Replace only: a document removed (kb remove) while its page was fetched stays removed.
    const written = await writeDocuments(deps, model, chatbotId, [{ doc, hash, chunks, fetchedAt }], { replaceOnly: true });
    if (written.updated === 0) continue;
    report.updated.push(entry);
    report.chunks += written.chunks;
  }
  report.ms = Math.round(performance.now() - started);
  return report;
}

/**
 * Reads the chatbot's remembered sitemaps again and ingests the pages they
 * list that are not documents yet (bounded and policed as at ingestion). A
 * sitemap answering 404 or 410 is forgotten; its pages stay until they are
 * gone themselves.
 */
async function addListedPages(deps: IngestDeps, chatbotId: number, report: SyncReport, signal: AbortSignal | undefined): Promise<void> {
  const { store, fetching } = deps;
  for (const sitemap of await store.sitemaps(chatbotId)) {
    if (signal?.aborted) return;
    let fetched: FetchedUrl;
    try {
      fetched = await fetchUrl(sitemap.url, fetching);
    } catch (error) {
      if (!(error instanceof LoadError)) throw error;
      if (error.status !== undefined && GONE.has(error.status)) await store.forgetSitemap(chatbotId, sitemap.id);
      else report.failed.push({ id: null, url: sitemap.url, error: error.message });
      continue;
    }
    if (fetched.kind !== "sitemap") {
      report.failed.push({ id: null, url: sitemap.url, error: "no longer a sitemap" });
      continue;
    }
    const found = await sitemapPages(sitemap.url, fetched.sitemap, fetching);
    report.failed.push(...found.failed.map((f) => ({ id: null, url: f.input, error: f.error })));
    const known = new Set((await store.webDocuments(chatbotId)).map((d) => d.source));
    const fresh = found.pages.filter((page) => !known.has(page));
    if (fresh.length === 0) continue;
    const ingested = await ingest(deps, chatbotId, fresh);
    report.chunks += ingested.chunks;
    report.failed.push(...ingested.failed.map((f) => ({ id: null, url: f.input, error: f.error })));
    for (const page of fresh) {
      const added = await store.documentBySource(chatbotId, page);
      if (added) report.added.push({ id: added.id, url: page });
    }
  }
}
