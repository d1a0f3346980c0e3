/** More terms make an `OR` query slow and no more precise. */
export const MAX_FTS_TERMS = 12;

/** An FTS5 `OR` of quoted words (`AND`, `*`, `NEAR(` or a quote are just text then); empty for none. */
export function ftsMatch(terms: string[]): string {
  return terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(" OR ");
}

/**
 * An FTS5 `MATCH` expression for a question's content words without looking
 * at frequencies: past {@link MAX_FTS_TERMS}, the longest words are kept as
 * they tend to be the rarest. Empty when there are none.
 *
 * @example
 * ftsQuery(["reset", "api", "key"]); // '"reset" OR "api" OR "key"'
 */
export function ftsQuery(words: string[]): string {
  let terms = words;
  if (terms.length > MAX_FTS_TERMS) {
    const keep = new Set([...terms].sort((a, b) => b.length - a.length).slice(0, MAX_FTS_TERMS));
    terms = terms.filter((t) => keep.has(t));
  }
  return ftsMatch(terms);
}
