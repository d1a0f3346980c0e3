import type { Embedder } from "./embedders/index.js";
import { dot } from "./embedders/types.js";
import { expandQuery, type QueryExpansion } from "./expansion.js";
import { combine, coverageOf, EXPANSION_WEIGHT, MAX_QUERY_CHARS, relevance } from "./search.js";
import { contentTerms, words } from "./text/tokens.js";

/**
 * Relevance a visitor question must reach for a stored question (an answer
 * correction) to answer it. Retrieval's threshold is far lower, since the model
 * still judges what it retrieved; here nothing does, so the stored question and
 * the visitor's must cover each other's words almost entirely.
 */
export const QUESTION_MATCH_THRESHOLD = 0.7;

/** Stored questions whose terms, expansion and vector are kept between calls. */
const CACHED_QUESTIONS = 2000;

export interface QuestionCandidate {
  id: number;
  question: string;
}

export interface QuestionMatch {
  id: number;
  /** Relevance in 0..1, at least the threshold. */
  score: number;
}

interface Prepared {
  terms: string[];
  expansion: QueryExpansion;
  words: Set<string>;
}

/**
 * Matches a visitor question against stored questions with retrieval's own
 * parts: the same words and stems, WordNet expansion (a related word counts
 * half), the configured embedder and {@link relevance}. Word coverage is taken
 * both ways and the lower one counts, so a stored question matches neither a
 * visitor question that asks more ("reset my password on the router") nor one
 * that asks less ("password?"). Stored questions are prepared (and embedded)
 * once per text and embedder, kept for the most recent {@link CACHED_QUESTIONS};
 * a changed question is a new text, so nothing needs invalidating.
 *
 * @example
 * const closest = createQuestionMatcher(() => createHashEmbedder());
 * await closest("How can I reset my password?", [{ id: 1, question: "How do I reset my password?" }]); // { id: 1, score: 0.97 }
 */
export function createQuestionMatcher(embedder: () => Embedder, threshold = QUESTION_MATCH_THRESHOLD) {
  const prepared = new Map<string, Prepared>();
  const vectors = new Map<string, Float32Array>();

  const remember = <T>(cache: Map<string, T>, key: string, value: T) => {
    if (cache.size >= CACHED_QUESTIONS) cache.delete(cache.keys().next().value!);
    cache.set(key, value);
    return value;
  };
  const prepare = (text: string): Prepared => {
    const found = prepared.get(text);
    if (found) return found;
    return remember(prepared, text, { terms: [...new Set(contentTerms(text))], expansion: expandQuery(text), words: new Set(words(text)) });
  };

  /** Unit vectors of stored questions, embedding only those not cached for this embedder. */
  const embedAll = async (model: Embedder, texts: string[]): Promise<Float32Array[]> => {
    const key = (t: string) => `${model.spec}\n${t}`;
    const missing = [...new Set(texts.filter((t) => !vectors.has(key(t))))];
    if (missing.length > 0) (await model.embed(missing)).forEach((v, i) => remember(vectors, key(missing[i]!), v));
    return texts.map((t) => vectors.get(key(t))!);
  };

  return async function closest(question: string, candidates: readonly QuestionCandidate[]): Promise<QuestionMatch | undefined> {
    const text = question.slice(0, MAX_QUERY_CHARS).trim();
    const asked = prepare(text);
    if (asked.terms.length === 0 || candidates.length === 0) return undefined;
    const forward = coverageOf(asked.terms, asked.expansion.related);

    // Relevance never exceeds word coverage (see `relevance`), so coverage alone rules most stored questions out before any embedding.
    const covered = candidates
      .map((c) => {
        const storedText = c.question.slice(0, MAX_QUERY_CHARS).trim();
        const stored = prepare(storedText);
        const backward = coverageOf(stored.terms, stored.expansion.related);
        return { candidate: c, storedText, stored, coverage: Math.min(forward(storedText), backward(text)) };
      })
      .filter((c) => c.coverage >= threshold);
    if (covered.length === 0) return undefined;

    const model = embedder();
    // As retrieval does: the hash embedder only matches the words it is given, so the asked words' vector is nudged towards their related words that the stored questions use.
    const related = model.spec === "hash" ? asked.expansion.words.filter((w) => covered.some((c) => c.stored.words.has(w))) : [];
    const [plain, expanded] = await model.embed(related.length > 0 ? [text, related.join(" ")] : [text]);
    const queryVector = expanded ? combine(plain!, expanded, EXPANSION_WEIGHT) : plain!;
    const storedVectors = await embedAll(model, covered.map((c) => c.storedText));

    let best: QuestionMatch | undefined;
    covered.forEach((c, i) => {
      const score = relevance(dot(queryVector, storedVectors[i]!), c.coverage, model.spec);
      // Ties go to the newest (highest id): the latest correction of a question wins.
      if (score >= threshold && (!best || score > best.score || (score === best.score && c.candidate.id > best.id))) best = { id: c.candidate.id, score };
    });
    return best;
  };
}

/** Whether a text has words a question can be matched on (not only stop words, digits or punctuation). */
export function hasQuestionWords(text: string): boolean {
  return contentTerms(text).length > 0;
}
