import type { Section } from "./sections.js";

/** A chunk before it is stored: its heading path (joined with ` > `) and text. */
export interface ChunkText {
  heading: string;
  content: string;
}

export interface ChunkSizing {
  /** Target size in characters; a chunk exceeds it only by whitespace. */
  size: number;
  /** Characters of whole trailing sentences repeated at the start of the next chunk. */
  overlap: number;
}

interface Unit {
  text: string;
  /** Separator before this unit when it follows another in a chunk. */
  sep: string;
}

// A sentence ends at . ! ? (optionally followed by a closing quote or bracket)
// before whitespace and something that starts a sentence.
const SENTENCE_END = /(?<=[.!?…]["'”’)\]]?)\s+(?=["'“‘(\[]?[\p{Lu}\p{N}])/u;
// Lists, tables, quotes and code read line by line, not as prose.
const LINE_WISE = /^\s*([-*+]\s|\d+[.)]\s|\||>|```|~~~| {4}|\t)/m;
// Records such as JSON turned into `key: value` lines.
const KEY_VALUE_LINE = /^[\p{L}\p{N}_.[\]-]+: /u;

/**
 * Packs each section's sentences into chunks of about `size` characters, never
 * crossing a heading, repeating up to `overlap` characters of whole sentences
 * between neighbours. Paragraph breaks are kept; a sentence longer than `size`
 * is cut at word boundaries.
 *
 * @example
 * chunkSections(markdownSections(md), { size: 1000, overlap: 150 });
 */
export function chunkSections(sections: Section[], { size, overlap }: ChunkSizing): ChunkText[] {
  const chunks: ChunkText[] = [];
  for (const section of sections) {
    const heading = section.headings.join(" > ");
    let current: Unit[] = [];
    let length = 0;
    // Units added since the last emit; what is left after it may be overlap only.
    let fresh = 0;
    const emit = () => {
      fresh = 0;
      chunks.push({ heading, content: current.map((u, i) => (i === 0 ? u.text : u.sep + u.text)).join("") });
      // Carry whole trailing units into the next chunk while they fit the overlap.
      const carried: Unit[] = [];
      let carriedLength = 0;
      for (let i = current.length - 1; i > 0; i--) {
        const unit = current[i]!;
        if (carriedLength + unit.text.length + unit.sep.length > overlap) break;
        carried.unshift(unit);
        carriedLength += unit.text.length + unit.sep.length;
      }
      current = carried;
      length = carried.reduce((n, u, i) => n + u.text.length + (i === 0 ? 0 : u.sep.length), 0);
    };
    for (const unit of units(section.body, size)) {
      const added = current.length === 0 ? unit.text.length : unit.sep.length + unit.text.length;
      if (current.length > 0 && length + added > size) {
        emit();
        // After an emit the overlap may still leave no room; then start clean.
        if (current.length > 0 && length + unit.sep.length + unit.text.length > size) {
          current = [];
          length = 0;
        }
      }
      length += current.length === 0 ? unit.text.length : unit.sep.length + unit.text.length;
      current.push(unit);
      fresh++;
    }
    if (fresh > 0) emit();
  }
  return chunks;
}

function* units(body: string, size: number): Generator<Unit> {
  let firstParagraph = true;
  for (const paragraph of body.split(/\n[ \t]*\n/)) {
    const trimmed = paragraph.replace(/^\n+|\s+$/g, "");
    if (!trimmed.trim()) continue;
    const lineWise = LINE_WISE.test(trimmed) || trimmed.split("\n").every((line) => KEY_VALUE_LINE.test(line));
    const pieces = lineWise ? trimmed.split("\n") : trimmed.replace(/\s*\n\s*/g, " ").split(SENTENCE_END);
    let first = true;
    for (const piece of pieces) {
      if (!piece.trim()) continue;
      const sep = first ? (firstParagraph ? "" : "\n\n") : lineWise ? "\n" : " ";
      let partFirst = true;
      for (const part of cutLong(piece, size)) {
        yield { text: part, sep: partFirst ? sep : " " };
        partFirst = false;
      }
      first = false;
      firstParagraph = false;
    }
  }
}

// Cuts a piece longer than `size` at the last space before the limit (or hard, for unbroken text).
function* cutLong(piece: string, size: number): Generator<string> {
  let rest = piece;
  while (rest.length > size) {
    let cut = rest.lastIndexOf(" ", size);
    if (cut < size / 2) cut = size;
    yield rest.slice(0, cut).trimEnd();
    rest = rest.slice(cut).trimStart();
  }
  if (rest) yield rest;
}
