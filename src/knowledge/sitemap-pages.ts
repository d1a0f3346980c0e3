import type { IngestOptions } from "../core/config.js";
import { fetchUrl, LoadError, type Sitemap } from "./loaders/index.js";
import type { IngestFailure, IngestSkip } from "./types.js";

export interface SitemapPages {
  /** Page URLs to ingest, in sitemap order, without repeats, at most `sitemapMaxPages`. */
  pages: string[];
  /** Nested sitemaps that could not be read. */
  failed: IngestFailure[];
  /** What was left out: pages past the bound, `<loc>` entries that are not http(s) URLs. */
  skipped: IngestSkip[];
}

/**
 * The pages a sitemap (fetched from `at`, or read from the file `at`) lists, following a sitemap index into its sitemaps
 * depth first. Nested sitemaps are fetched like pages (address policy on
 * every one, size and time limits), each at most once. At most
 * `sitemapMaxPages` pages are taken and as many nested sitemaps fetched, so a
 * huge or looping index costs a bounded amount of work.
 *
 * @example
 * const { pages } = await sitemapPages("https://example.com/sitemap.xml", sitemap, config.ingest);
 */
export async function sitemapPages(at: string, sitemap: Sitemap, fetching: Required<IngestOptions>): Promise<SitemapPages> {
  const max = fetching.sitemapMaxPages;
  const result: SitemapPages = { pages: [], failed: [], skipped: [] };
  const taken = new Set<string>();
  // `at` is a URL, or the path of a sitemap file.
  const visited = new Set<string>([URL.canParse(at) ? new URL(at).href : at]);
  let fetches = 0;
  let cut = false;

  const visit = async (at: string, map: Sitemap): Promise<void> => {
    if (map.ignored > 0) result.skipped.push({ input: at, reason: `${map.ignored} <loc> entries are not http(s) URLs` });
    for (const location of map.locations) {
      if (map.kind === "urlset") {
        if (taken.has(location)) continue;
        if (result.pages.length >= max) return void (cut = true);
        taken.add(location);
        result.pages.push(location);
        continue;
      }
      if (visited.has(location)) continue;
      if (result.pages.length >= max || fetches >= max) return void (cut = true);
      visited.add(location);
      fetches++;
      try {
        const fetched = await fetchUrl(location, fetching);
        if (fetched.kind === "sitemap") await visit(location, fetched.sitemap);
        else result.failed.push({ input: location, error: `listed in the sitemap index ${at} but not a sitemap` });
      } catch (error) {
        if (!(error instanceof LoadError)) throw error;
        result.failed.push({ input: location, error: error.message });
      }
    }
  };
  await visit(at, sitemap);
  if (cut) result.skipped.push({ input: at, reason: `the sitemap lists more than ${max} pages; the first ${max} were taken (ingest.sitemapMaxPages)` });
  return result;
}
