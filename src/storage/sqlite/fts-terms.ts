import type { Sqlite } from "./open.js";
import { ftsMatch, MAX_FTS_TERMS } from "./fts-match.js";

/** A word in more than this share of all chunks says little about a chunk (BM25 gives it almost no weight) but costs a long posting list. */
const FREQUENT_SHARE = 0.05;
/** Below this many matching chunks a word is cheap whatever its share, so small bases keep every word. */
const FREQUENT_MIN = 1000;
/** Document frequencies change with ingestion; they are a cost estimate, so being a minute stale is fine. */
const CACHE_MS = 60_000;
const CACHE_MAX = 50_000;

/**
 * Picks the full-text query words of a question by document frequency: the
 * rarest first (up to {@link MAX_FTS_TERMS}), leaving out words found in more
 * than 5 % of all chunks unless nothing rarer is left. Frequencies are counted
 * by FTS5 itself (so its stemming applies) and cached per word.
 *
 * @example
 * const terms = createTermSelector(sqlite);
 * terms.select(["api", "refund", "the"]); // ["refund", "api"] on a small base
 */
export function createTermSelector(sqlite: Sqlite) {
  const frequency = sqlite.prepare<[string], { n: number }>("SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH ?");
  const total = sqlite.prepare<[], { n: number }>("SELECT count(*) AS n FROM chunks");
  let cache = new Map<string, number>();
  let limit = 0;
  let since = -Infinity;

  const documentFrequency = (word: string): number => {
    let n = cache.get(word);
    if (n === undefined) {
      n = frequency.get(ftsMatch([word]))!.n;
      cache.set(word, n);
    }
    return n;
  };

  const refresh = () => {
    const now = Date.now();
    if (now - since > CACHE_MS || cache.size > CACHE_MAX) {
      cache = new Map();
      limit = Math.max(FREQUENT_MIN, FREQUENT_SHARE * total.get()!.n);
      since = now;
    }
  };

  return {
    select(words: string[]): string[] {
      refresh();
      const ranked = words.map((word) => ({ word, n: documentFrequency(word) })).sort((a, b) => a.n - b.n);
      const kept = ranked.filter((t, i) => i === 0 || t.n <= limit).slice(0, MAX_FTS_TERMS);
      return kept.map((t) => t.word);
    },
    /** The words found in at least one chunk (of any chatbot): related words a knowledge base never uses only blur a query. */
    known(words: string[]): string[] {
      refresh();
      return words.filter((word) => documentFrequency(word) > 0);
    },
  };
}
