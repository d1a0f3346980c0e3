import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { H3Event } from "h3";
import { packageRoot } from "../../core/package-root.js";

/** The widget script as served: its bytes, gzipped once, and their ETag. */
export interface WidgetScript {
  source: string;
  gzipped: Buffer;
  etag: string;
}

/** Where the script lives in the package; plain JS, served exactly as written. */
export const WIDGET_SCRIPT_PATH = join("src", "widget", "client", "widget.js");

let loaded: WidgetScript | undefined;

/**
 * Reads `widget.js` from the package folder once per process and compresses
 * it once, so serving it costs no file or zlib work per request.
 *
 * @example
 * const { gzipped } = loadWidgetScript();
 */
export function loadWidgetScript(): WidgetScript {
  if (loaded) return loaded;
  const source = readFileSync(join(packageRoot(), WIDGET_SCRIPT_PATH), "utf8");
  const etag = `"${createHash("sha256").update(source).digest("base64url").slice(0, 27)}"`;
  return (loaded = { source, gzipped: gzipSync(source, { level: 9 }), etag });
}

/**
 * `GET /widget.js`: cacheable for a few minutes (site owners expect a fix to
 * reach visitors soon), revalidated by ETag, gzipped when the client accepts it,
 * and loadable from any page, including ones isolated with COEP.
 */
export function serveWidgetScript(event: H3Event): string | Buffer {
  const script = loadWidgetScript();
  const headers = event.res.headers;
  headers.set("content-type", "text/javascript; charset=utf-8");
  headers.set("cache-control", "public, max-age=300");
  headers.set("etag", script.etag);
  headers.set("vary", "accept-encoding");
  headers.set("x-content-type-options", "nosniff");
  headers.set("cross-origin-resource-policy", "cross-origin");
  if (event.req.headers.get("if-none-match") === script.etag) {
    event.res.status = 304;
    return "";
  }
  if (/\bgzip\b/.test(event.req.headers.get("accept-encoding") ?? "")) {
    headers.set("content-encoding", "gzip");
    return script.gzipped;
  }
  return script.source;
}
