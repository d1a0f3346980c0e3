import { FetchError, ofetch } from "ofetch";
import { convert, type SourceFormat } from "./convert.js";
import { LoadError } from "./errors.js";
import { MAX_FILE_BYTES } from "./files.js";
import type { LoadedDocument } from "./types.js";

/**
 * Fetches a web page or file and reads it by its content type (HTML, Markdown,
 * plain text, JSON or PDF). An HTML page is named by its title.
 *
 * @example
 * const doc = await loadUrl("https://example.com/help/refunds");
 */
export async function loadUrl(url: string, { timeoutMs = 15_000 }: { timeoutMs?: number } = {}): Promise<LoadedDocument> {
  let response: Awaited<ReturnType<typeof ofetch.raw<ArrayBuffer, "arrayBuffer">>>;
  try {
    response = await ofetch.raw(url, {
      responseType: "arrayBuffer",
      timeout: timeoutMs,
      retry: 1,
      headers: { accept: "text/html, text/markdown, text/plain, application/json, application/pdf;q=0.9, */*;q=0.5", "user-agent": "chatsvc-ingest" },
    });
  } catch (error) {
    if (error instanceof FetchError && error.response) throw new LoadError(`HTTP ${error.response.status} ${error.response.statusText}`.trim());
    throw new LoadError(`cannot fetch (${error instanceof Error ? error.message : String(error)})`);
  }
  const bytes = new Uint8Array(response._data ?? new ArrayBuffer(0));
  if (bytes.byteLength > MAX_FILE_BYTES) throw new LoadError(`response too large (${bytes.byteLength} bytes)`);
  const contentType = response.headers.get("content-type") ?? "";
  const format = formatOf(contentType, url);
  if (!format) throw new LoadError(`unsupported content type "${contentType}"`);
  const converted = await convert(format, bytes);
  const finalUrl = response.url || url;
  return {
    name: converted.title || nameFromUrl(finalUrl),
    type: "url",
    source: url,
    url: finalUrl,
    format: converted.format,
    text: converted.text,
    bytes: bytes.byteLength,
  };
}

function formatOf(contentType: string, url: string): SourceFormat | undefined {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (type === "text/markdown" || type === "text/x-markdown") return "md";
  if (type === "application/json" || type.endsWith("+json")) return "json";
  if (type === "application/pdf") return "pdf";
  if (type === "text/plain") return /\.(md|markdown)$/i.test(new URL(url).pathname) ? "md" : "txt";
  if (type === "" || type === "application/octet-stream") {
    const path = new URL(url).pathname.toLowerCase();
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
