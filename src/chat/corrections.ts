import type { CorrectionRecord, CorrectionStore } from "../core/storage/index.js";
import type { Knowledge } from "../knowledge/types.js";

export interface MatchedCorrection {
  correction: CorrectionRecord;
  /** Relevance in 0..1 of the visitor question to the correction's question. */
  score: number;
}

export type CorrectionAnswers = ReturnType<typeof createCorrectionAnswers>;

/**
 * Finds the correction of a chatbot that answers a visitor question. The
 * chatbot's corrections are read from the database on every send, so an edit
 * on any instance applies to the next message everywhere; their matching
 * features (and embeddings) are cached per question text by the knowledge
 * matcher.
 *
 * @example
 * const match = await answers.find(bot.id, "How do I reset my password?");
 */
export function createCorrectionAnswers(store: CorrectionStore, knowledge: Pick<Knowledge, "closestQuestion">) {
  return {
    async find(chatbotId: number, question: string): Promise<MatchedCorrection | undefined> {
      const corrections = await store.ofChatbot(chatbotId);
      if (corrections.length === 0) return undefined;
      const match = await knowledge.closestQuestion(question, corrections);
      return match && { correction: corrections.find((c) => c.id === match.id)!, score: match.score };
    },
  };
}
