import type { UnansweredWording } from "../core/storage/index.js";
import { contentTerms, words } from "../knowledge/text/tokens.js";

/** Distinct wordings kept per group, for a reader to see what was asked. */
const MAX_WORDINGS = 5;

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

/** Visitor questions that are the same question asked in other words, with how they fared. */
export interface QuestionGroup {
  /** The most recent wording. */
  question: string;
  /** Times asked (replies counted: a reply that could not answer and was also rated bad counts once). */
  count: number;
  cannot_answer: number;
  bad_ratings: number;
  last_asked_at: string;
  /** The conversation of the most recent ask. */
  example_conversation_id: number;
  /** Up to five distinct wordings, most recent first. */
  wordings: string[];
}

/**
 * Groups the wordings of unanswered replies by their stored {@link questionKey},
 * most asked first, then most recently asked; among equals, the group whose
 * latest reply was stored last comes first (as replies sort newest first).
 */
export function groupWordings(found: UnansweredWording[]): QuestionGroup[] {
  const newestFirst = [...found].sort((a, b) => (a.last_asked_at < b.last_asked_at ? 1 : a.last_asked_at > b.last_asked_at ? -1 : b.last_reply_id - a.last_reply_id));
  const groups = new Map<string, QuestionGroup>();
  for (const w of newestFirst) {
    let group = groups.get(w.key);
    if (!group) {
      group = { question: w.question, count: 0, cannot_answer: 0, bad_ratings: 0, last_asked_at: w.last_asked_at, example_conversation_id: w.last_conversation_id, wordings: [] };
      groups.set(w.key, group);
    }
    group.count += w.count;
    group.cannot_answer += w.cannot_answer;
    group.bad_ratings += w.bad_ratings;
    if (group.wordings.length < MAX_WORDINGS) group.wordings.push(w.question);
  }
  // A stable sort: groups keep the order of their latest reply among equal counts and times.
  return [...groups.values()].sort((a, b) => b.count - a.count || (a.last_asked_at < b.last_asked_at ? 1 : a.last_asked_at > b.last_asked_at ? -1 : 0));
}
