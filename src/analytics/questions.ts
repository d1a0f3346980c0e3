import { contentTerms, words } from "../knowledge/text/tokens.js";
import type { UnansweredRow } from "../core/storage/index.js";

/** Distinct wordings kept per group, for a reader to see what was asked. */
const MAX_WORDINGS = 5;

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
 * The grouping key of a question: its content words stemmed by the same
 * stemmer retrieval uses (`knowledge/text/tokens`), stop words dropped, each
 * word once, sorted. So case, punctuation, diacritics, word order, repeated
 * words, question words ("how", "what", "can I") and endings (plural, -ing,
 * -ed) do not split a group: "How do I get a refund?" and "refunds" are one
 * question. A question of stop words only is keyed by its plain words.
 */
export function questionKey(question: string): string {
  const terms = [...new Set(contentTerms(question))].sort();
  return terms.length > 0 ? terms.join(" ") : words(question).join(" ");
}

/**
 * Groups unanswered replies by the visitor question before them (see
 * {@link questionKey}), most asked first, then most recently asked.
 * Rows must come newest first; rows without a question are left out.
 */
export function groupQuestions(rows: UnansweredRow[]): QuestionGroup[] {
  const groups = new Map<string, QuestionGroup>();
  for (const row of rows) {
    if (row.question === null) continue;
    const text = row.question.trim();
    const key = questionKey(text);
    let group = groups.get(key);
    if (!group) {
      group = { question: text, count: 0, cannot_answer: 0, bad_ratings: 0, last_asked_at: row.asked_at, example_conversation_id: row.conversation_id, wordings: [] };
      groups.set(key, group);
    }
    group.count++;
    if (row.cannot_answer) group.cannot_answer++;
    if (row.bad_rating) group.bad_ratings++;
    if (group.wordings.length < MAX_WORDINGS && !group.wordings.includes(text)) group.wordings.push(text);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || (a.last_asked_at < b.last_asked_at ? 1 : a.last_asked_at > b.last_asked_at ? -1 : 0));
}
