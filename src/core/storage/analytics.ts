/** Which records a report covers: the chatbots (all of one organisation, or one of them) and a time range. */
export interface AnalyticsScope {
  chatbot_ids: number[];
  /** ISO times, both inclusive. */
  since: string;
  until: string;
}

/** What happened on one UTC day (`YYYY-MM-DD`); days without any record are absent. */
export interface DayCounts {
  day: string;
  /** Conversations started that day. */
  conversations: number;
  /** Messages of role `user`. */
  visitor_messages: number;
  /** Bot replies (not regenerated away, not operator messages) that were not the fallback. */
  answered: number;
  /** Bot replies (not regenerated away) that were the fallback. */
  cannot_answer: number;
  /** Ratings of replies stored that day (a rating has no time of its own). */
  good_ratings: number;
  bad_ratings: number;
  leads: number;
  /** Conversations that went to a person that day (the first time; `handed_off_at`). */
  handoffs: number;
}

/** One wording of the visitor questions before a scope's unanswered replies, with how those replies fared. */
export interface UnansweredWording {
  /** The near-duplicate grouping key of the question (`StorageOptions.questionKey`). */
  key: string;
  /** The question, trimmed. */
  question: string;
  /** Replies after it (a reply that could not answer and was also rated bad counts once). */
  count: number;
  cannot_answer: number;
  bad_ratings: number;
  /** The most recent of those replies: when it was stored, its id and its conversation. */
  last_asked_at: string;
  last_reply_id: number;
  last_conversation_id: number;
}

/** A document of a chatbot with how often replies cited it. */
export interface DocumentCitations {
  document_id: number;
  chatbot_id: number;
  name: string;
  type: string;
  url: string | null;
  cited: number;
  last_cited_at: string | null;
}

/**
 * Read-only reports over conversations, messages and leads. Citations are
 * counted when replies are stored (see `ConversationStore.storeTurn`), so
 * reading them does not parse every reply's `sources`.
 */
export interface AnalyticsStore {
  /** Counts per UTC day of the scope's range, oldest first. */
  daily(scope: AnalyticsScope): Promise<DayCounts[]>;
  /**
   * The scope's visible replies that could not answer or were rated bad, counted per distinct
   * wording of the visitor question before each (replies without a question left out), any order.
   */
  unanswered(scope: AnalyticsScope): Promise<UnansweredWording[]>;
  /** Every document of the chatbots, with its citations, most cited first. */
  citations(chatbotIds: number[]): Promise<DocumentCitations[]>;
}
