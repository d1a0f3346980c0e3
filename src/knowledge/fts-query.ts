import { STOP_WORDS, words } from "./text/tokens.js";

/** More terms make an `OR` query slow and no more precise. */
export const MAX_FTS_TERMS = 12;

/**
 * An FTS5 `MATCH` expression for free user text: its distinct content words,
 * each quoted (so `AND`, `*`, `"` or `NEAR(` in the text are just words), joined
 * with `OR`. Stop words are dropped; past {@link MAX_FTS_TERMS}, the longest
 * words are kept as they tend to be the rarest. Empty when nothing is left.
 *
 * @example
 * ftsQuery('How do I "reset" my API key?'); // '"reset" OR "api" OR "key"'
 */
export function ftsQuery(text: string): string {
  let terms = ftsWords(text);
  if (terms.length > MAX_FTS_TERMS) {
    const keep = new Set([...terms].sort((a, b) => b.length - a.length).slice(0, MAX_FTS_TERMS));
    terms = terms.filter((t) => keep.has(t));
  }
  return ftsMatch(terms);
}

/** The distinct words of free text worth a full-text search: no stop words, none shorter than 2 letters. */
export function ftsWords(text: string): string[] {
  const seen = new Set<string>();
  for (const w of words(text)) {
    if (w.length >= 2 && !STOP_WORDS.has(w)) seen.add(w);
  }
  return [...seen];
}

/** An FTS5 `OR` of quoted words (`AND`, `*` or `NEAR(` are just words then); empty for none. */
export function ftsMatch(terms: string[]): string {
  return terms.map((t) => `"${t}"`).join(" OR ");
}
