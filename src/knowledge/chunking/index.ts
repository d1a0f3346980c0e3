import { markdownSections, type Section } from "./sections.js";
import { chunkSections, type ChunkSizing, type ChunkText } from "./split.js";

export type { ChunkText, ChunkSizing } from "./split.js";
export { markdownSections, type Section } from "./sections.js";

/**
 * Chunks a loaded document: Markdown (and HTML, which loaders turn into
 * Markdown) by headings, plain text as one heading-less section.
 *
 * @example
 * chunkText("md", "# Refunds\nWithin 30 days.", { size: 1000, overlap: 150 });
 * // [{heading: "Refunds", content: "Within 30 days."}]
 */
export function chunkText(format: "md" | "txt", text: string, sizing: ChunkSizing): ChunkText[] {
  const sections: Section[] = format === "md" ? markdownSections(text) : [{ headings: [], body: text.replace(/\r\n?/g, "\n") }];
  return chunkSections(sections, sizing);
}
