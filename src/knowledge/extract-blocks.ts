/** A piece of a chunk the extractive model can quote: one prose sentence, or a whole code block, list or table. */
export interface Block {
  kind: "sentence" | "code" | "list" | "table";
  /** Markdown as it should appear in an answer (code keeps its fence and language tag). */
  text: string;
  /** Text scored against the question: the sentence, the code, or each list item. */
  parts: string[];
  /** Sentences of one paragraph share this number, so they are joined with a space rather than a blank line. */
  paragraph: number;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const LIST_ITEM = /^\s*([-*+]|\d+[.)])\s+/;
const TABLE_ROW = /^\s*\|/;
const SENTENCE_END = /(?<=[.!?]["'”’)\]]?)\s+(?=["'“‘(\[`]?[\p{Lu}\p{N}`])/u;

/**
 * Splits a chunk's Markdown into quotable blocks, in order: fenced code blocks
 * (an unclosed fence, cut by chunking, is closed), lists and tables whole,
 * prose as sentences.
 *
 * @example
 * markdownBlocks("Run:\n\n```sh\nnpm i chatsvc\n```");
 * // [{kind: "sentence", text: "Run:"}, {kind: "code", text: "```sh\nnpm i chatsvc\n```"}]
 */
export function markdownBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  let paragraph = 0;
  let prose: string[] = [];
  const flushProse = () => {
    const text = prose.join(" ").replace(/\s+/g, " ").trim();
    prose = [];
    if (!text) return;
    for (const sentence of text.split(SENTENCE_END)) {
      if (sentence.trim()) blocks.push({ kind: "sentence", text: sentence.trim(), parts: [sentence.trim()], paragraph });
    }
    paragraph++;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      flushProse();
      const marker = fence[1]!;
      const body: string[] = [];
      let closed = false;
      for (i++; i < lines.length; i++) {
        const close = FENCE.exec(lines[i]!);
        if (close && close[1]![0] === marker[0] && close[1]!.length >= marker.length && close[2]!.trim() === "") {
          closed = true;
          break;
        }
        body.push(lines[i]!);
      }
      const code = body.join("\n").replace(/\s+$/, "");
      if (code.trim()) blocks.push({ kind: "code", text: `${marker}${fence[2]!.trim()}\n${code}\n${marker}`, parts: [code], paragraph: paragraph++ });
      if (!closed) break;
      continue;
    }
    const kind = LIST_ITEM.test(line) ? "list" : TABLE_ROW.test(line) ? "table" : null;
    if (kind) {
      flushProse();
      const rows: string[] = [line];
      // A list goes on through its items and their indented continuation lines.
      while (i + 1 < lines.length && (kind === "list" ? LIST_ITEM.test(lines[i + 1]!) || /^\s{2,}\S/.test(lines[i + 1]!) : TABLE_ROW.test(lines[i + 1]!))) rows.push(lines[++i]!);
      const parts = kind === "list" ? rows.filter((r) => LIST_ITEM.test(r)).map((r) => r.replace(LIST_ITEM, "")) : rows;
      blocks.push({ kind, text: rows.join("\n").replace(/\s+$/, ""), parts, paragraph: paragraph++ });
      continue;
    }
    if (line.trim() === "") flushProse();
    else prose.push(line);
  }
  flushProse();
  return blocks;
}

/**
 * A list block's items, each with its continuation lines, as they appear in
 * the Markdown: chunks overlap, so two passages of one document can quote the
 * same item.
 */
export function listItems(block: Block): string[] {
  const items: string[] = [];
  for (const line of block.text.split("\n")) {
    if (LIST_ITEM.test(line) || items.length === 0) items.push(line);
    else items[items.length - 1] += `\n${line}`;
  }
  return items;
}

/** The same list without `items` (a subset of its own, in order). */
export function withItems(block: Block, items: string[]): Block {
  return { ...block, text: items.join("\n"), parts: items.map((item) => item.split("\n")[0]!.replace(LIST_ITEM, "")) };
}

const TABLE_DELIMITER = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

/**
 * A table block's header (its first row and the delimiter row) and body rows.
 * A table that chunking cut has no header in the chunks after the first: its
 * rows alone do not render as a table.
 */
export function tableParts(block: Block): { header: string[] | undefined; rows: string[] } {
  const lines = block.text.split("\n");
  return lines.length >= 2 && TABLE_DELIMITER.test(lines[1]!) ? { header: lines.slice(0, 2), rows: lines.slice(2) } : { header: undefined, rows: lines };
}

/** A table row's cells, trimmed (an escaped `\|` stays inside its cell). */
export function tableCells(row: string): string[] {
  return row
    .trim()
    .replace(/^\|/, "")
    .replace(/(?<!\\)\|$/, "")
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());
}
