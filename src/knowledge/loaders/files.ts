import { readFile, readdir, stat } from "node:fs/promises";
import { basename, extname, join, resolve } from "node:path";
import { convert, type SourceFormat } from "./convert.js";
import { LoadError } from "./errors.js";
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
 * Supported files under a folder, recursively, in a stable order. Hidden
 * entries and `node_modules` are skipped, and so are files of other types.
 *
 * @example
 * for await (const file of walkFolder("./docs")) console.log(file);
 */
export async function* walkFolder(dir: string): AsyncGenerator<string> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walkFolder(path);
    else if (entry.isFile() && FILE_FORMATS[extname(entry.name).toLowerCase()]) yield path;
  }
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
  if (!format) {
    throw new LoadError(`unsupported file type "${extension || "(none)"}"; supported: ${Object.keys(FILE_FORMATS).join(", ")}`);
  }
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
  const converted = await convert(format, bytes);
  return { name: basename(absolute), type: "file", source: absolute, url: null, format: converted.format, text: converted.text, bytes: bytes.byteLength };
}

/** `ENOENT` and friends in words. */
export function readableFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT") return "no such file or folder";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EISDIR") return "is a folder";
  return error instanceof Error ? error.message : String(error);
}
