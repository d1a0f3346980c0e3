import { expandQuery } from "./expansion.js";
import { listItems, markdownBlocks, tableCells, tableParts, withItems, type Block } from "./extract-blocks.js";
import { contentTerms, termFinder, termWeight } from "./text/tokens.js";
import type { RetrievedChunk } from "./types.js";

/** Prose sentences an answer holds at most, over all its passages (code blocks, lists and tables come whole on top). */
const MAX_SENTENCES = 4;
/** Passages (a quoted sentence and what it introduces) from different places. */
const MAX_PASSAGES = 2;
/** Share of the question's weighted content words a sentence and its heading must cover, part of it in the sentence itself. */
const MIN_COVERAGE = 0.4;
/** The same when the question has a word unknown to the documents and the thesaurus: "Can I pay with bitcoin?" is not answered by a pricing sentence. */
const MIN_COVERAGE_UNKNOWN = 0.51;
/** A second passage must score at least this share of the best one. */
const SECOND_PASSAGE_SHARE = 0.8;

interface Candidate {
  chunk: RetrievedChunk;
  blocks: Block[];
  index: number;
  score: number;
}

/** Answers worked out elsewhere (the search thread) for a search's chunks, so the same answer is not worked out twice. */
const extracted = new WeakMap<readonly RetrievedChunk[], { question: string; answer: string | null }>();

/**
 * Records the answer {@link extractAnswer} gives for `question` and these
 * chunks, worked out where they were found: a later call with the same array
 * and question returns it.
 */
export function rememberExtract(context: readonly RetrievedChunk[], question: string, answer: string | null): void {
  extracted.set(context, { question, answer });
}

/**
 * The passage of the retrieved chunks that answers the question, as Markdown
 * with its sources (the extractive model's answer), or null when no passage
 * covers it: see {@link compose}.
 */
export function extractAnswer(question: string, context: readonly RetrievedChunk[]): string | null {
  const known = extracted.get(context);
  return known?.question === question ? known.answer : compose(question, context);
}

/** The answer's Markdown, or null when no passage covers the question. */
export function compose(question: string, context: readonly RetrievedChunk[]): string | null {
  const keys = [...new Set(contentTerms(question))];
  if (keys.length === 0) return null;
  const total = keys.reduce((n, t) => n + termWeight(t), 0);
  const specific = keys.filter((t) => termWeight(t) === 1);
  const related = expandQuery(question).related;

  // Only these words count, so a text's other words are not stemmed (the same sets as intersecting with its content terms).
  const find = termFinder([...new Set([...keys, ...[...related.values()].flatMap((words) => [...words])])]);
  // A specific word that neither the documents nor the thesaurus know ("bitcoin") is asked about something the documents do not cover.
  const unknownWords = specific.filter((t) => !related.has(t));
  const mentions = unknownWords.length === 0 ? undefined : termFinder(unknownWords);
  const unknown = mentions !== undefined && unknownWords.some((t) => !context.some((c) => mentions(`${c.heading} ${c.content}`).has(t)));
  const minCoverage = unknown ? MIN_COVERAGE_UNKNOWN : MIN_COVERAGE;
  // A key term is covered by itself or by a related word (query expansion).
  const share = (t: string, words: Set<string>) => (words.has(t) || [...(related.get(t) ?? [])].some((r) => words.has(r)) ? 1 : 0);
  /** How many of the question's specific words, and of all its words, a text has. */
  const termsIn = (words: Set<string>): [specific: number, any: number] => [
    specific.reduce((n, t) => n + share(t, words), 0),
    keys.reduce((n, t) => n + share(t, words), 0),
  ];
  const candidates: Candidate[] = [];
  context.forEach((chunk, rank) => {
    const blocks = markdownBlocks(chunk.content);
    const heading = find(chunk.heading);
    blocks.forEach((block, index) => {
      const own = find(block.parts.join(" "));
      let covered = 0;
      let inBlock = 0;
      for (const t of keys) {
        const w = termWeight(t);
        inBlock += w * share(t, own);
        covered += w * Math.max(share(t, own), share(t, heading));
      }
      const specificInBlock = specific.length === 0 || specific.some((t) => share(t, own) > 0);
      if (covered / total < minCoverage || inBlock === 0 || !specificInBlock) return;
      candidates.push({ chunk, blocks, index, score: covered / total + (0.5 * inBlock) / total + 0.2 / (rank + 1) });
    });
  });
  if (candidates.length === 0) return null;
  candidates.sort((a, b) => b.score - a.score);

  const passages: { chunk: RetrievedChunk; blocks: Block[] }[] = [];
  const used = new Set<string>();
  // List items quoted so far: the overlap of two chunks repeats the items at the end of one at the start of the next.
  const usedItems = new Set<string>();
  let sentences = 0;
  for (const c of candidates) {
    if (passages.length === MAX_PASSAGES || sentences >= MAX_SENTENCES) break;
    if (passages.length > 0) {
      const first = passages[0]!.chunk;
      // Another section of the same document (the widget's embed snippet and its allowed origins) completes an answer; elsewhere only a close second does.
      const strong = c.score >= SECOND_PASSAGE_SHARE * candidates[0]!.score || c.chunk.document_id === first.document_id;
      if (!strong || passages.some((p) => p.chunk.chunk_id === c.chunk.chunk_id)) continue;
    }
    // The answering block itself must be news: quoted already (a list: every item of it), the passage only repeats.
    if (used.has(c.blocks[c.index]!.text) || !unquoted(c.blocks[c.index]!, usedItems)) continue;
    const passage = passageAt(c.blocks, c.index, MAX_SENTENCES - sentences)
      .filter((b) => !used.has(b.text))
      .map((b) => unquoted(b, usedItems))
      .filter((b): b is Block => b !== undefined)
      .map((b) => (b.kind === "table" ? rowsAsked(b, (row) => termsIn(find(row))) : b));
    if (passage.length === 0) continue;
    for (const b of passage) {
      used.add(b.text);
      if (b.kind === "list") for (const item of listItems(b)) usedItems.add(item.trim());
      if (b.kind === "sentence") sentences++;
    }
    passages.push({ chunk: c.chunk, blocks: passage });
  }
  // Passages of one document read best in its order.
  if (passages.length === 2 && passages[0]!.chunk.document_id === passages[1]!.chunk.document_id && passages[0]!.chunk.chunk_id > passages[1]!.chunk.chunk_id) passages.reverse();
  // Two lists one after the other would read as one (Markdown joins them): the second takes other markers.
  const body = passages
    .map((p, i) => render(i > 0 && passages[i - 1]!.blocks.at(-1)!.kind === "list" && p.blocks[0]!.kind === "list" ? [otherMarkers(p.blocks[0]!), ...p.blocks.slice(1)] : p.blocks))
    .join("\n\n");
  const sources = [...new Set(passages.map((p) => citation(p.chunk)))];
  return `${body}\n\n*Source: ${sources.join(", ")}*`;
}

/**
 * A table cut to the rows that name the most specific words of the question
 * (when none names one, the most of any of its words; when none does either,
 * every row), under its header. A table whose header chunking left in an
 * earlier chunk becomes a list of those rows, since rows without a header do
 * not render as a table.
 */
function rowsAsked(block: Block, termsIn: (row: string) => [specific: number, any: number]): Block {
  const { header, rows } = tableParts(block);
  const counts = rows.map(termsIn);
  const best = (i: 0 | 1) => Math.max(0, ...counts.map((c) => c[i]));
  const [specificBest, anyBest] = [best(0), best(1)];
  const kept = specificBest > 0 ? rows.filter((_, r) => counts[r]![0] === specificBest) : anyBest > 0 ? rows.filter((_, r) => counts[r]![1] === anyBest) : rows;
  if (header) return { ...block, text: [...header, ...kept].join("\n"), parts: kept };
  const items = kept.map((row) => `- ${tableCells(row).filter((cell) => cell !== "").join(" · ")}`);
  return { ...block, kind: "list", text: items.join("\n"), parts: items.map((item) => item.slice(2)) };
}

/** A list with other item markers (`*` for `-` or `+`, `-` for `*`, `1)` for `1.`), so Markdown starts a new list. */
function otherMarkers(block: Block): Block {
  const text = block.text.replace(/^(\s*)(?:([-+])|(\*)|(\d+)\.)(?=\s)/gm, (_, indent: string, dashOrPlus?: string, star?: string, number?: string) =>
    indent + (dashOrPlus ? "*" : star ? "-" : `${number})`),
  );
  return { ...block, text };
}

/** A list without the items an earlier passage quoted; undefined when none is left. Other blocks as they are. */
function unquoted(block: Block, quoted: Set<string>): Block | undefined {
  if (block.kind !== "list") return block;
  const items = listItems(block);
  const fresh = items.filter((item) => !quoted.has(item.trim()));
  if (fresh.length === 0) return undefined;
  return fresh.length === items.length ? block : withItems(block, fresh);
}

/**
 * The answering block, then what follows it in its chunk: whatever a colon
 * introduces, and further sentences of its paragraph while the budget lasts. A
 * code block, list or table found first keeps the sentence before it.
 */
function passageAt(blocks: Block[], index: number, budget: number): Block[] {
  const start = blocks[index]!;
  const out: Block[] = [start];
  let sentences = start.kind === "sentence" ? 1 : 0;
  const before = blocks[index - 1];
  if (start.kind !== "sentence" && before?.kind === "sentence") {
    out.unshift(before);
    sentences++;
  }
  for (let i = index + 1; i < blocks.length; i++) {
    const last = out[out.length - 1]!;
    const next = blocks[i]!;
    const introduced = last.kind === "sentence" && last.text.endsWith(":");
    const sameParagraph = next.kind === "sentence" && next.paragraph === last.paragraph && sentences < Math.min(budget, 2);
    if (!introduced && !sameParagraph) break;
    out.push(next);
    if (next.kind === "sentence") sentences++;
  }
  return out;
}

/** Sentences of one paragraph on one line; code blocks, lists and tables as blocks of their own. */
function render(blocks: Block[]): string {
  let out = "";
  blocks.forEach((b, i) => {
    const previous = blocks[i - 1];
    if (previous) out += b.kind === "sentence" && previous.kind === "sentence" && previous.paragraph === b.paragraph ? " " : "\n\n";
    out += b.text;
  });
  return out;
}

/** A web page links to its address; a file shows its title (its first heading) beside its file name. */
export function citation(chunk: Pick<RetrievedChunk, "name" | "url" | "title">): string {
  if (chunk.url) return `[${chunk.name.replace(/[[\]]/g, "")}](${chunk.url.replace(/[()\s]/g, encodeURIComponent)})`;
  return chunk.title ? `${chunk.title} (${chunk.name})` : chunk.name;
}
