import { htmlToMarkdown } from "./html.js";
import { jsonToMarkdown } from "./json.js";
import { pdfToText } from "./pdf.js";
import { LoadError } from "./errors.js";

export type SourceFormat = "md" | "txt" | "html" | "json" | "pdf";

export interface ConvertedText {
  format: "md" | "txt";
  text: string;
  /** The HTML title, when there is one. */
  title: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Turns raw bytes of a supported format into chunkable text.
 *
 * @example
 * await convert("html", Buffer.from("<h1>Hi</h1>")); // {format: "md", text: "# Hi", title: "Hi"}
 */
export async function convert(format: SourceFormat, bytes: Uint8Array): Promise<ConvertedText> {
  if (format === "pdf") {
    let text: string;
    try {
      text = await pdfToText(bytes);
    } catch (error) {
      throw new LoadError(`not a readable PDF (${error instanceof Error ? error.message : String(error)})`);
    }
    if (!text.trim()) throw new LoadError("the PDF has no extractable text (scanned images are not supported)");
    return { format: "txt", text, title: "" };
  }
  return convertText(format, decode(bytes));
}

/** {@link convert} for text already decoded. */
export function convertText(format: Exclude<SourceFormat, "pdf">, text: string): ConvertedText {
  const withoutBom = text.replace(/^\uFEFF/, "");
  if (format === "html") {
    const { title, markdown } = htmlToMarkdown(withoutBom);
    return { format: "md", text: markdown, title };
  }
  if (format === "json") {
    let value: unknown;
    try {
      value = JSON.parse(withoutBom);
    } catch (error) {
      throw new LoadError(`invalid JSON (${error instanceof Error ? error.message : String(error)})`);
    }
    return { format: "md", text: jsonToMarkdown(value), title: "" };
  }
  return { format, text: withoutBom, title: "" };
}

/** UTF-8 text of a file or body; throws {@link LoadError} for binary data. */
export function decode(bytes: Uint8Array): string {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new LoadError("not UTF-8 text (binary file?)");
  }
  if (text.includes("\u0000")) throw new LoadError("not a text file (contains NUL bytes)");
  return text;
}
