import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { H3Event } from "h3";
import { ChatsvcError } from "../../core/errors.js";
import { packageRoot } from "../../core/package-root.js";

interface Asset {
  type: string;
  body: string;
  gzipped: Buffer;
  etag: string;
}

/** The browser bundle `npm run build` writes (see tsup.config.ts). */
const BUNDLE = { "console.js": "text/javascript; charset=utf-8", "console.css": "text/css; charset=utf-8" } as const;
export type AssetName = keyof typeof BUNDLE;

const loaded = new Map<AssetName, Asset>();

function load(name: AssetName): Asset {
  let asset = loaded.get(name);
  if (asset) return asset;
  const file = join(packageRoot(), "dist", "console", name);
  if (!existsSync(file)) throw new ChatsvcError(503, "The console is not built: run npm run build");
  const body = readFileSync(file, "utf8");
  asset = { type: BUNDLE[name], body, gzipped: gzipSync(body, { level: 9 }), etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` };
  loaded.set(name, asset);
  return asset;
}

/** Serves a bundle file, revalidated by ETag, gzipped when accepted. Read once per process. */
export function serveAsset(event: H3Event, name: AssetName): string | Buffer {
  const asset = load(name);
  const headers = event.res.headers;
  headers.set("content-type", asset.type);
  headers.set("cache-control", "no-cache");
  headers.set("etag", asset.etag);
  headers.set("vary", "accept-encoding");
  headers.set("x-content-type-options", "nosniff");
  if (event.req.headers.get("if-none-match") === asset.etag) {
    event.res.status = 304;
    return "";
  }
  if (/\bgzip\b/.test(event.req.headers.get("accept-encoding") ?? "")) {
    headers.set("content-encoding", "gzip");
    return asset.gzipped;
  }
  return asset.body;
}

/**
 * The page every console URL answers: the bundle does the rest (hash routes, so the
 * server needs one page). Asset URLs are relative to the console's own path, so it works
 * wherever it is mounted; a strict CSP allows only this server's script and styles.
 */
export function servePage(event: H3Event): string | undefined {
  const path = event.url.pathname;
  if (!path.endsWith("/")) {
    // Relative asset URLs need the trailing slash.
    event.res.status = 308;
    event.res.headers.set("location", `${path}/${event.url.search}`);
    return "";
  }
  const headers = event.res.headers;
  headers.set("content-type", "text/html; charset=utf-8");
  headers.set("cache-control", "no-store");
  headers.set("content-security-policy", "default-src 'self'; img-src 'self' data: https:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
  headers.set("x-frame-options", "DENY");
  headers.set("referrer-policy", "no-referrer");
  headers.set("x-content-type-options", "nosniff");
  return PAGE;
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>chatsvc console</title>
<!-- No icon of its own: without this, every browser asks for /favicon.ico and logs the 404. -->
<link rel="icon" href="data:,">
<link rel="stylesheet" href="console.css">
<script type="module" src="console.js"></script>
</head>
<body>
<div id="app"><noscript>The chatsvc console needs JavaScript.</noscript></div>
</body>
</html>
`;
