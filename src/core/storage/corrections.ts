import type { PageOf, PageRequest } from "./conversations.js";

/** A stored answer correction: the answer a chatbot gives to a question (and its rephrasings). */
export interface CorrectionRecord {
  id: number;
  chatbot_id: number;
  question: string;
  /** Markdown. */
  answer: string;
  source_name: string | null;
  source_url: string | null;
  created_at: string;
  updated_at: string;
}

export type NewCorrection = Omit<CorrectionRecord, "id">;

/** Fields to change; undefined leaves a field as it is (null clears the optional ones). */
export type CorrectionPatch = Partial<Pick<CorrectionRecord, "question" | "answer" | "source_name" | "source_url">> & { updated_at: string };

/** Why turning a reply into a correction stored nothing. */
export type CorrectionFromMessageRefusal =
  /** No visible message with that id in the conversation. */
  | { refused: "missing" }
  /** The message is the visitor's, not a reply. */
  | { refused: "not-reply" }
  /** No visitor message precedes the reply. */
  | { refused: "no-question" }
  /** The visitor message has nothing a question could match (`accepts` said no). */
  | { refused: "unmatchable" };

export interface CorrectionStore {
  /** One page of a chatbot's corrections, newest first. */
  page(chatbotId: number, page: PageRequest): Promise<PageOf<CorrectionRecord>>;
  /** Every correction of a chatbot (what a visitor question is matched against), oldest first. */
  ofChatbot(chatbotId: number): Promise<CorrectionRecord[]>;
  find(id: number): Promise<CorrectionRecord | undefined>;
  create(correction: NewCorrection): Promise<CorrectionRecord>;
  update(id: number, patch: CorrectionPatch): Promise<CorrectionRecord | undefined>;
  delete(id: number): Promise<boolean>;
  /**
   * One transaction: finds the visible assistant message `messageId` of the
   * conversation and the visitor message before it, and stores a correction of
   * the conversation's chatbot whose question is that visitor message, when
   * `accepts` (synchronous, run inside the transaction) takes it.
   */
  fromMessage(
    conversationId: number,
    messageId: number,
    correction: Omit<NewCorrection, "chatbot_id" | "question">,
    accepts: (question: string) => boolean,
  ): Promise<CorrectionRecord | CorrectionFromMessageRefusal>;
}
