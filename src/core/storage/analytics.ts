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

/** A visible bot reply that could not answer or was rated bad, with the visitor message before it. */
export interface UnansweredRow {
  conversation_id: number;
  /** The visitor message the reply answered; null when there is none before it. */
  question: string | null;
  /** When the reply was stored. */
  asked_at: string;
  cannot_answer: boolean;
  bad_rating: boolean;
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
  /** The scope's unanswered replies, newest first. */
  unanswered(scope: AnalyticsScope): Promise<UnansweredRow[]>;
  /** Every document of the chatbots, with its citations, most cited first. */
  citations(chatbotIds: number[]): Promise<DocumentCitations[]>;
}
