import { z } from "zod";
import type { Chatbots } from "./chatbots.js";
import { nowIso } from "./clock.js";
import type { Conversations } from "./conversations.js";
import { ChatsvcError } from "./errors.js";
import { DEFAULT_PER_PAGE, pageMeta, pageQueryShape, type Page } from "./pagination.js";
import type { CorrectionPatch, CorrectionRecord, CorrectionStore } from "./storage/index.js";
import { body, parse, text } from "./validation.js";

/** A correction as the API shows it. */
export interface Correction {
  id: number;
  question: string;
  /** Markdown, as given. */
  answer: string;
  source_name: string | null;
  source_url: string | null;
  created_at: string;
  updated_at: string;
}

export interface CorrectionInput {
  question: string;
  answer: string;
  source_name?: string | null;
  source_url?: string | null;
}

export type CorrectionUpdateInput = Partial<CorrectionInput>;

/** Body of `POST /conversations/{id}/messages/{message_id}/correct`: the question is the visitor message the reply answered. */
export type CorrectMessageInput = Omit<CorrectionInput, "question">;

/** As long as a visitor message may be, so any question a visitor asked can become a correction. */
export const MAX_QUESTION_CHARS = 10_000;
export const MAX_ANSWER_CHARS = 10_000;

const url = text("source_url", { max: 2048 })
  .refine((s) => /^https?:\/\//i.test(s.trim()) && URL.canParse(s.trim()), { message: "The source url field must be an http(s) URL." })
  .meta({ format: "uri" });

const shape = {
  question: text("question", { min: 1, max: MAX_QUESTION_CHARS }),
  answer: text("answer", { min: 1, max: MAX_ANSWER_CHARS }),
  source_name: text("source_name", { max: 255 }).nullable().optional(),
  source_url: url.nullable().optional(),
};

/** Body of `POST /chatbots/{slug}/corrections`. */
export const createCorrectionSchema = body(shape);
/** Body of `PUT /chatbots/{slug}/corrections/{id}`: any of the fields, at least one. */
export const updateCorrectionSchema = body({ ...shape, question: shape.question.optional(), answer: shape.answer.optional() });
/** Body of `POST /conversations/{id}/messages/{message_id}/correct`. */
export const correctMessageSchema = body({ answer: shape.answer, source_name: shape.source_name, source_url: shape.source_url });
/** Query of `GET /chatbots/{slug}/corrections`. */
export const listCorrectionsSchema = z.object({ page: pageQueryShape.page, per_page: pageQueryShape.per_page }, { error: "The query must be an object." });

export interface CorrectionsDeps {
  chatbots: Chatbots;
  conversations: Conversations;
  /** Whether a question has words a visitor question can match (not only stop words or punctuation). */
  matchable(question: string): boolean;
  /** The answer's HTML as a reply would show it: empty when nothing is left once sanitised. */
  render(markdown: string): Promise<string>;
}

const toCorrection = (row: CorrectionRecord): Correction => ({
  id: row.id,
  question: row.question,
  answer: row.answer,
  source_name: row.source_name,
  source_url: row.source_url,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

const blankToNull = (s: string | null | undefined) => (s === undefined ? undefined : s === null || s.trim() === "" ? null : s.trim());

export type Corrections = ReturnType<typeof createCorrections>;

/**
 * Answer corrections: per chatbot question and answer pairs that answer a
 * matching visitor question instead of the model (see src/chat/corrections.ts).
 * Account level: the chatbot must belong to the caller's organisation (403
 * otherwise); a correction id of another chatbot is a 404.
 *
 * @example
 * await service.corrections.create(orgId, "demo", { question: "Do you ship to Canada?", answer: "Yes, in 5 days." });
 */
export function createCorrections(store: CorrectionStore, { chatbots, conversations, matchable, render }: CorrectionsDeps) {
  const ofChatbot = async (chatbotId: number, id: number): Promise<CorrectionRecord> => {
    const row = await store.find(id);
    if (!row || row.chatbot_id !== chatbotId) throw ChatsvcError.notFound("Correction not found");
    return row;
  };

  /** 422s a question or answer that could never be used; checks only the fields given. */
  const check = async ({ question, answer }: { question?: string; answer?: string }) => {
    const errors: Record<string, string[]> = {};
    if (question !== undefined && !matchable(question)) errors.question = ["The question field must contain words a visitor could ask, not only common words."];
    if (answer !== undefined && (await render(answer)) === "") errors.answer = ["The answer field has no content once unsafe HTML is removed."];
    if (Object.keys(errors).length > 0) throw ChatsvcError.validation(errors);
  };

  return {
    /** A chatbot's corrections, newest first. */
    async list(organizationId: number, slug: string, query: { page?: number | string; per_page?: number | string } = {}): Promise<Page<Correction>> {
      const bot = await chatbots.resolve(organizationId, slug);
      const { page = 1, per_page: perPage = DEFAULT_PER_PAGE } = parse(listCorrectionsSchema, query);
      const { total, rows } = await store.page(bot.id, { limit: perPage, offset: (page - 1) * perPage });
      return { data: rows.map(toCorrection), meta: pageMeta({ page, perPage, total, count: rows.length }) };
    },

    async get(organizationId: number, slug: string, id: number): Promise<Correction> {
      const bot = await chatbots.resolve(organizationId, slug);
      return toCorrection(await ofChatbot(bot.id, id));
    },

    async create(organizationId: number, slug: string, input: CorrectionInput | undefined): Promise<Correction> {
      const bot = await chatbots.resolve(organizationId, slug);
      const data = parse(createCorrectionSchema, input);
      await check(data);
      const now = nowIso();
      const row = await store.create({
        chatbot_id: bot.id,
        question: data.question.trim(),
        answer: data.answer,
        source_name: blankToNull(data.source_name) ?? null,
        source_url: blankToNull(data.source_url) ?? null,
        created_at: now,
        updated_at: now,
      });
      return toCorrection(row);
    },

    /** Partial update: fields left out keep their value; `null` clears `source_name` or `source_url`. */
    async update(organizationId: number, slug: string, id: number, input: CorrectionUpdateInput | undefined): Promise<Correction> {
      const bot = await chatbots.resolve(organizationId, slug);
      const data = parse(updateCorrectionSchema, input);
      const patch: CorrectionPatch = {
        question: data.question?.trim(),
        answer: data.answer,
        source_name: blankToNull(data.source_name),
        source_url: blankToNull(data.source_url),
        updated_at: nowIso(),
      };
      if (patch.question === undefined && patch.answer === undefined && patch.source_name === undefined && patch.source_url === undefined) {
        throw ChatsvcError.validation({ body: ["Nothing to update: give at least one of question, answer, source_name or source_url."] });
      }
      await check(data);
      const row = await ofChatbot(bot.id, id);
      const updated = await store.update(row.id, patch);
      if (!updated) throw ChatsvcError.notFound("Correction not found");
      return toCorrection(updated);
    },

    async delete(organizationId: number, slug: string, id: number): Promise<void> {
      const bot = await chatbots.resolve(organizationId, slug);
      const row = await ofChatbot(bot.id, id);
      if (!(await store.delete(row.id))) throw ChatsvcError.notFound("Correction not found");
    },

    /**
     * Turns an assistant reply into a correction of its chatbot, for the
     * visitor message that preceded it, in one write. 404/403 for the
     * conversation per the account-level rules; 404 for a message not in it;
     * 400 when the message is not a reply or no visitor message precedes it.
     */
    async fromMessage(organizationId: number, conversationId: number, messageId: number, input: CorrectMessageInput | undefined): Promise<Correction> {
      const conversation = await conversations.ofOrganization(organizationId, conversationId);
      const data = parse(correctMessageSchema, input);
      await check(data);
      const now = nowIso();
      const stored = await store.fromMessage(conversation.id, messageId, {
        answer: data.answer,
        source_name: blankToNull(data.source_name) ?? null,
        source_url: blankToNull(data.source_url) ?? null,
        created_at: now,
        updated_at: now,
      }, matchable);
      if ("refused" in stored) {
        if (stored.refused === "missing") throw ChatsvcError.notFound("Message not found");
        if (stored.refused === "not-reply") throw ChatsvcError.badRequest("Only an assistant reply can be corrected");
        if (stored.refused === "no-question") throw ChatsvcError.badRequest("This reply answers no visitor message, so it cannot become a correction");
        throw ChatsvcError.badRequest("The visitor message this reply answers has no words a question could match");
      }
      return toCorrection(stored);
    },
  };
}
