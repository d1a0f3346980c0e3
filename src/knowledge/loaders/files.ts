import { readFile, readdir, stat } from "node:fs/promises";
import { basename, extname, join, resolve } from "node:path";
import { convert, decode, type SourceFormat } from "./convert.js";
import { LoadError } from "./errors.js";
import { parseSitemap, type Sitemap } from "./sitemap.js";
import type { LoadedDocument } from "./types.js";

/** File extensions the loaders read, and how. */
export const FILE_FORMATS: Readonly<Record<string, SourceFormat>> = {
  ".md": "md",
  ".markdown": "md",
  ".txt": "txt",
  ".html": "html",
  ".htm": "html",
  ".json": "json",
  ".pdf": "pdf",
};

/** Files larger than this are refused: they are almost never documentation. */
export const MAX_FILE_BYTES = 20 * 1024 * 1024;

/**
 * Files under a folder, recursively, in a stable order, each with the reason
 * it is left out when it is of a type the loaders do not read (so the report
 * can say so). Hidden entries and `node_modules` are passed over silently:
 * they are never documentation, and listing them would bury the report.
 *
 * @example
 * for await (const { path, unsupported } of walkFolder("./docs")) console.log(path, unsupported ?? "ok");
 */
export async function* walkFolder(dir: string): AsyncGenerator<{ path: string; unsupported?: string }> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walkFolder(path);
    else if (entry.isFile()) yield FILE_FORMATS[extname(entry.name).toLowerCase()] ? { path } : { path, unsupported: unsupportedType(path) };
  }
}

function unsupportedType(path: string): string {
  return `unsupported file type "${extname(path).toLowerCase() || "(none)"}"; supported: ${Object.keys(FILE_FORMATS).join(", ")}`;
}

/**
 * Reads one file of a supported type.
 *
 * @example
 * const doc = await loadFile("./docs/quick-start.md");
 */
export async function loadFile(path: string): Promise<LoadedDocument> {
  const absolute = resolve(path);
  const extension = extname(absolute).toLowerCase();
  const format = FILE_FORMATS[extension];
  // Named on its own, a file of another type is a mistake worth failing on; in a folder it is only skipped.
  if (!format) throw new LoadError(unsupportedType(absolute));
  let size: number;
  try {
    size = (await stat(absolute)).size;
  } catch (error) {
    throw new LoadError(readableFsError(error));
  }
  if (size > MAX_FILE_BYTES) throw new LoadError(`file too large (${size} bytes; at most ${MAX_FILE_BYTES})`);
  let bytes: Buffer;
  try {
    bytes = await readFile(absolute);
  } catch (error) {
    throw new LoadError(readableFsError(error));
  }
  // Empty is not malformed: an empty .json or .pdf is left out like an empty .md, not failed as unparsable.
  if (isBlank(bytes)) return { name: basename(absolute), type: "file", source: absolute, url: null, format: "txt", text: "", bytes: bytes.byteLength };
  const converted = await convert(format, bytes);
  return { name: basename(absolute), type: "file", source: absolute, url: null, format: converted.format, text: converted.text, bytes: bytes.byteLength };
}

/**
 * Reads a sitemap kept as a file (a static site's build output): `ingest` then fetches the pages it lists.
 *
 * @example
 * const sitemap = await loadSitemapFile("./public/sitemap.xml");
 */
export async function loadSitemapFile(path: string): Promise<Sitemap> {
  const absolute = resolve(path);
  let bytes: Buffer;
  try {
    const size = (await stat(absolute)).size;
    if (size > MAX_FILE_BYTES) throw new LoadError(`file too large (${size} bytes; at most ${MAX_FILE_BYTES})`);
    bytes = await readFile(absolute);
  } catch (error) {
    throw error instanceof LoadError ? error : new LoadError(readableFsError(error));
  }
  const sitemap = parseSitemap(decode(bytes));
  if (!sitemap) throw new LoadError("an XML file that is not a sitemap (urlset or sitemapindex)");
  return sitemap;
}

const WHITESPACE_BYTES = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20]);

/** No bytes, or only ASCII whitespace after an optional UTF-8 BOM; stops at the first other byte, so a real file costs nothing. */
function isBlank(bytes: Uint8Array): boolean {
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  for (let i = start; i < bytes.length; i++) if (!WHITESPACE_BYTES.has(bytes[i]!)) return false;
  return true;
}

/** `ENOENT` and friends in words. */
export function readableFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT") return "no such file or folder";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EISDIR") return "is a folder";
  return error instanceof Error ? error.message : String(error);
}
