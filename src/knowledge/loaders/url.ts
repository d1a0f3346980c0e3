import type { IngestOptions } from "../../core/config.js";
import { guardedFetch, GuardedFetchError, type GuardedResponse } from "../../net/guarded-fetch.js";
import { convert, type SourceFormat } from "./convert.js";
import { LoadError } from "./errors.js";
import { MAX_FILE_BYTES } from "./files.js";
import type { LoadedDocument } from "./types.js";

/**
 * Fetches a web page or file and reads it by its content type (HTML, Markdown,
 * plain text, JSON or PDF). An HTML page is named by its title. The fetch goes
 * through the address policy (no private, loopback or metadata addresses
 * unless `allowPrivateNetworks`, on every redirect too), stops at
 * {@link MAX_FILE_BYTES} while downloading, and refuses a content type it
 * cannot read before downloading the body.
 *
 * @example
 * const doc = await loadUrl("https://example.com/help/refunds", { allowPrivateNetworks: false, timeoutMs: 15_000 });
 */
export async function loadUrl(url: string, { allowPrivateNetworks, timeoutMs }: Required<IngestOptions>): Promise<LoadedDocument> {
  let response: GuardedResponse;
  try {
    response = await guardedFetch(url, {
      policy: { allowPrivateNetworks },
      timeoutMs,
      maxBytes: MAX_FILE_BYTES,
      headers: { accept: "text/html, text/markdown, text/plain, application/json, application/pdf;q=0.9, */*;q=0.5", "user-agent": "chatsvc-ingest" },
      accept: ({ url, headers }) => (formatOf(headers["content-type"] ?? "", url) ? null : `unsupported content type "${headers["content-type"] ?? ""}"`),
    });
  } catch (error) {
    if (error instanceof GuardedFetchError) throw new LoadError(error.message);
    throw error;
  }
  const format = formatOf(response.headers["content-type"] ?? "", response.url)!;
  const converted = await convert(format, response.body);
  const finalUrl = response.url.href;
  return {
    name: converted.title || nameFromUrl(finalUrl),
    type: "url",
    source: url,
    url: finalUrl,
    format: converted.format,
    text: converted.text,
    bytes: response.body.byteLength,
  };
}

function formatOf(contentType: string, url: URL): SourceFormat | undefined {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (type === "text/markdown" || type === "text/x-markdown") return "md";
  if (type === "application/json" || type.endsWith("+json")) return "json";
  if (type === "application/pdf") return "pdf";
  if (type === "text/plain") return /\.(md|markdown)$/i.test(url.pathname) ? "md" : "txt";
  if (type === "" || type === "application/octet-stream") {
    const path = url.pathname.toLowerCase();
    if (path.endsWith(".pdf")) return "pdf";
    if (/\.(md|markdown)$/.test(path)) return "md";
  }
  return undefined;
}

function nameFromUrl(url: string): string {
  const parsed = new URL(url);
  const last = parsed.pathname.split("/").filter(Boolean).pop();
  return last ? decodeURIComponent(last) : parsed.host;
}
