import { contentTerms, words } from "../knowledge/text/tokens.js";

/** Distinct wordings a group of `GET /analytics/unanswered` shows, for a reader to see what was asked. */
export const MAX_WORDINGS = 5;

/**
 * The grouping key of a question: its content words stemmed by the same
 * stemmer retrieval uses (`knowledge/text/tokens`), stop words dropped, each
 * word once, sorted. So case, punctuation, diacritics, word order, repeated
 * words, question words ("how", "what", "can I") and endings (plural, -ing,
 * -ed) do not split a group: "How do I get a refund?" and "refunds" are one
 * question. A question of stop words only is keyed by its plain words. The
 * storage layer stores it with each unanswered reply (`StorageOptions.questionKey`).
 */
export function questionKey(question: string): string {
  const terms = [...new Set(contentTerms(question))].sort();
  return terms.length > 0 ? terms.join(" ") : words(question).join(" ");
}
