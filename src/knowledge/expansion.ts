import { related } from "./text/thesaurus.js";
import { STOP_WORDS, stem, words } from "./text/tokens.js";
import { similarWords } from "./text/word-vectors.js";

/** Related words kept per asked word, most frequent senses first: past a few, they drift from the meaning asked. */
const MAX_PER_WORD = 8;
/** Similar words (word vectors) kept per asked word among those `keep` passes: from 3 to 15 measured about the same. */
const SIMILAR_PER_WORD = 6;

export interface QueryExpansion {
  /** Each asked content term (stemmed, as from `contentTerms`) with the stemmed terms of its related words. */
  related: Map<string, Set<string>>;
  /** The related words themselves, lower-case, each once, none of them asked: for full-text search and embedding. */
  words: string[];
}

/**
 * Related words for a question's content words and two-word phrases ("give
 * away" -> "donate"), from the WordNet thesaurus: how an offline knowledge base
 * finds "renewing a loan" when asked about "extending" it. `keep` filters the
 * related words (to those the knowledge base uses). Callers weigh them below
 * the asked words. With `similar`, words used in the same contexts (word
 * vectors, see {@link similarWords}) join them, up to a few per asked word
 * among those `keep` passes: "tablet" -> "ipad" is in no thesaurus.
 *
 * @example
 * expandQuery("Can I return a film late?").related.get("film"); // Set {"movi", "pictur", ...}
 */
export function expandQuery(text: string, keep: (words: string[]) => string[] = (w) => w, similar = false): QueryExpansion {
  const pending = prepareExpansion(text, similar);
  return pending.finish(keep(pending.offered));
}

/**
 * {@link expandQuery} in two steps, for a `keep` that must wait (a knowledge
 * store's lookup): the candidate related words, then the expansion of those kept.
 */
export function prepareExpansion(text: string, similar = false): { offered: string[]; finish: (kept: string[]) => QueryExpansion } {
  const asked = words(text);
  const content = asked.filter((w) => w.length >= 3 && !STOP_WORDS.has(w) && !/\d/.test(w));
  const askedStems = new Set(content.map(stem));
  const candidates: [key: string, lemma: string][] = [];
  const add = (key: string, lemmas: string[]) => {
    let kept = 0;
    for (const lemma of lemmas) {
      if (kept === MAX_PER_WORD) break;
      // Phrases ("moving picture") would spread weight over words that mean little alone.
      if (!/^[a-z]{3,}$/.test(lemma) || STOP_WORDS.has(lemma) || askedStems.has(stem(lemma))) continue;
      candidates.push([key, lemma]);
      kept++;
    }
  };
  for (const w of new Set(content)) add(stem(w), related(w));
  for (let i = 0; i + 1 < asked.length; i++) {
    const [a, b] = [asked[i]!, asked[i + 1]!];
    if (a.length < 2 || b.length < 2 || /\d/.test(a + b)) continue;
    const phrase = related(`${a}_${b}`);
    // The phrase stands for its content words: "give away" -> "donate" counts for "give".
    const key = [a, b].find((w) => !STOP_WORDS.has(w));
    if (phrase.length > 0 && key) add(stem(key), phrase);
  }
  // Similar words are many and mostly absent from a given knowledge base, so they are capped after `keep`, not before.
  const similarCandidates: [key: string, lemma: string][] = [];
  if (similar) {
    for (const w of new Set(content)) {
      for (const lemma of similarWords(w)) if (!STOP_WORDS.has(lemma) && lemma.length >= 3 && !askedStems.has(stem(lemma))) similarCandidates.push([stem(w), lemma]);
    }
  }

  return { offered: [...new Set([...candidates, ...similarCandidates].map(([, lemma]) => lemma))], finish: (keptWords) => finish(candidates, similarCandidates, new Set(keptWords)) };
}

function finish(thesaurus: [key: string, lemma: string][], similarCandidates: [key: string, lemma: string][], kept: Set<string>): QueryExpansion {
  const candidates = [...thesaurus];
  const similarKept = new Map<string, number>();
  for (const [key, lemma] of similarCandidates) {
    const n = similarKept.get(key) ?? 0;
    if (!kept.has(lemma) || n === SIMILAR_PER_WORD) continue;
    similarKept.set(key, n + 1);
    candidates.push([key, lemma]);
  }
  const relatedTerms = new Map<string, Set<string>>();
  for (const [key, lemma] of candidates) {
    if (!kept.has(lemma)) continue;
    const set = relatedTerms.get(key) ?? new Set();
    set.add(stem(lemma));
    relatedTerms.set(key, set);
  }
  return { related: relatedTerms, words: [...new Set(candidates.filter(([, lemma]) => kept.has(lemma)).map(([, lemma]) => lemma))] };
}
