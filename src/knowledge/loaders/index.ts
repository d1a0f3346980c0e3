import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import type { IngestInput, IngestSkip } from "../types.js";
import { convertText } from "./convert.js";
import { LoadError } from "./errors.js";
import { loadFile, readableFsError, walkFolder } from "./files.js";
import type { LoadedDocument, LoadTarget } from "./types.js";


export { LoadError } from "./errors.js";
export { FILE_FORMATS, loadSitemapFile } from "./files.js";
export type { LoadedDocument, LoadTarget, PageValidators } from "./types.js";
export { fetchUrl, type FetchedUrl } from "./url.js";
export type { Sitemap } from "./sitemap.js";

/** An input that could not even be expanded (missing path, bad URL). */
export interface ExpandFailure {
  input: string;
  error: string;
}

/**
 * Expands ingest inputs into single targets: folders into their supported
 * files (the others listed as skipped), strings starting with `http(s)://` into URLs, the rest into files.
 * Only paths are kept in memory, so a folder of thousands of files is cheap.
 *
 * @example
 * const { targets, failed, skipped } = await expandInputs(["./docs", "https://example.com/faq"]);
 */
export async function expandInputs(inputs: IngestInput[]): Promise<{ targets: LoadTarget[]; failed: ExpandFailure[]; skipped: IngestSkip[] }> {
  const targets: LoadTarget[] = [];
  const failed: ExpandFailure[] = [];
  const skipped: IngestSkip[] = [];
  for (const input of inputs) {
    if (typeof input !== "string") {
      targets.push({ kind: "text", name: input.name, content: input.content, format: input.format ?? "md", url: input.url ?? null });
      continue;
    }
    if (/^https?:\/\//i.test(input)) {
      if (URL.canParse(input)) targets.push({ kind: "url", url: input });
      else failed.push({ input, error: "invalid URL" });
      continue;
    }
    const path = resolve(input);
    try {
      const info = await stat(path);
      if (info.isDirectory()) {
        for await (const file of walkFolder(path)) {
          if (file.unsupported) skipped.push({ input: file.path, reason: file.unsupported });
          else targets.push({ kind: "file", path: file.path });
        }
      } else targets.push({ kind: "file", path });
    } catch (error) {
      failed.push({ input, error: readableFsError(error) });
    }
  }
  return { targets, failed, skipped };
}

/** What a target is called in progress lines and failure reports. */
export function targetLabel(target: LoadTarget): string {
  return target.kind === "file" ? target.path : target.kind === "url" ? target.url : target.name;
}

/**
 * Loads a file or text target into text (URLs go through {@link fetchUrl}, which may find a sitemap).
 * Throws {@link LoadError} with a readable reason.
 *
 * @example
 * const doc = await loadTarget({ kind: "file", path: "/abs/docs/faq.md" });
 */
export async function loadTarget(target: Exclude<LoadTarget, { kind: "url" }>): Promise<LoadedDocument> {
  if (target.kind === "file") return loadFile(target.path);
  if (!target.name.trim()) throw new LoadError("a text input needs a name");
  const converted = convertText(target.format, target.content);
  return {
    name: target.name,
    type: target.url ? "url" : "text",
    source: target.url ?? `text:${target.name}`,
    url: target.url,
    format: converted.format,
    text: converted.text,
    bytes: Buffer.byteLength(target.content),
  };
}
