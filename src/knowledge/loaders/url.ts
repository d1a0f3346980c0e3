import type { IncomingHttpHeaders } from "node:http";
import type { IngestOptions } from "../../core/config.js";
import { guardedFetch, GuardedFetchError, type GuardedResponse } from "../../net/guarded-fetch.js";
import { convert, decode, type SourceFormat } from "./convert.js";
import { LoadError } from "./errors.js";
import { MAX_FILE_BYTES } from "./files.js";
import { parseSitemap, type Sitemap } from "./sitemap.js";
import type { LoadedDocument, PageValidators } from "./types.js";

/** What fetching a URL gave: a page to index, a sitemap listing more URLs, or (conditional fetch) no change. */
export type FetchedUrl =
  | { kind: "page"; doc: LoadedDocument & { web: PageValidators } }
  | { kind: "sitemap"; sitemap: Sitemap }
  | { kind: "not-modified"; validators: PageValidators };

/**
 * Fetches a web page or file and reads it by its content type (HTML, Markdown,
 * plain text, JSON or PDF; XML when it is a sitemap). An HTML page is named by
 * its title. The fetch goes through the address policy (no private, loopback
 * or metadata addresses unless `allowPrivateNetworks`, on every redirect too),
 * stops at {@link MAX_FILE_BYTES} while downloading, and refuses a content type
 * it cannot read before downloading the body. With `validators` the request is
 * conditional (`If-None-Match`, `If-Modified-Since`) and a 304 answers
 * `not-modified`. Throws {@link LoadError}, with the HTTP status when the server refused.
 *
 * @example
 * const fetched = await fetchUrl("https://example.com/help/refunds", { allowPrivateNetworks: false, timeoutMs: 15_000, sitemapMaxPages: 1000 });
 */
export async function fetchUrl(
  url: string,
  { allowPrivateNetworks, timeoutMs }: Required<IngestOptions>,
  { validators }: { validators?: PageValidators } = {},
): Promise<FetchedUrl> {
  const conditional: Record<string, string> = {};
  if (validators?.etag) conditional["if-none-match"] = validators.etag;
  if (validators?.last_modified) conditional["if-modified-since"] = validators.last_modified;
  let response: GuardedResponse;
  try {
    response = await guardedFetch(url, {
      policy: { allowPrivateNetworks },
      timeoutMs,
      maxBytes: MAX_FILE_BYTES,
      headers: {
        accept: "text/html, text/markdown, text/plain, application/json, application/pdf;q=0.9, application/xml;q=0.8, */*;q=0.5",
        "user-agent": "chatsvc-ingest",
        ...conditional,
      },
      notModified: validators !== undefined,
      accept: ({ url, headers }) => (formatOf(headers["content-type"] ?? "", url) ? null : `unsupported content type "${headers["content-type"] ?? ""}"`),
    });
  } catch (error) {
    if (error instanceof GuardedFetchError) throw new LoadError(error.message, error.status);
    throw error;
  }
  const web = validatorsOf(response.headers);
  if (response.status === 304) return { kind: "not-modified", validators: { etag: web.etag ?? validators?.etag ?? null, last_modified: web.last_modified ?? validators?.last_modified ?? null } };
  const format = formatOf(response.headers["content-type"] ?? "", response.url)!;
  if (format === "xml") {
    const sitemap = parseSitemap(decode(response.body));
    if (!sitemap) throw new LoadError("an XML document that is not a sitemap (urlset or sitemapindex)");
    return { kind: "sitemap", sitemap };
  }
  const converted = await convert(format, response.body);
  const finalUrl = response.url.href;
  return {
    kind: "page",
    doc: {
      name: converted.title || nameFromUrl(finalUrl),
      type: "url",
      source: url,
      url: finalUrl,
      format: converted.format,
      text: converted.text,
      bytes: response.body.byteLength,
      web,
    },
  };
}

function validatorsOf(headers: IncomingHttpHeaders): PageValidators {
  const etag = headers.etag?.trim();
  const lastModified = headers["last-modified"]?.trim();
  return { etag: etag || null, last_modified: lastModified || null };
}

function formatOf(contentType: string, url: URL): SourceFormat | "xml" | undefined {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (type === "text/markdown" || type === "text/x-markdown") return "md";
  if (type === "application/json" || type.endsWith("+json")) return "json";
  if (type === "application/pdf") return "pdf";
  if (type === "application/xml" || type === "text/xml") return "xml";
  if (type === "text/plain") return /\.(md|markdown)$/i.test(url.pathname) ? "md" : "txt";
  if (type === "" || type === "application/octet-stream") {
    const path = url.pathname.toLowerCase();
    if (path.endsWith(".pdf")) return "pdf";
    if (/\.(md|markdown)$/.test(path)) return "md";
    if (path.endsWith(".xml")) return "xml";
  }
  return undefined;
}

function nameFromUrl(url: string): string {
  const parsed = new URL(url);
  const last = parsed.pathname.split("/").filter(Boolean).pop();
  return last ? decodeURIComponent(last) : parsed.host;
}
