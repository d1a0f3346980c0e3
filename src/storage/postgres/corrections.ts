import type pg from "pg";
import type { CorrectionRecord, CorrectionStore } from "../../core/storage/index.js";
import { all, one, run, statement, transaction } from "./client.js";

const COLUMNS = "id, chatbot_id, question, answer, source_name, source_url, created_at, updated_at";

const byId = statement("corrections_by_id", `SELECT ${COLUMNS} FROM corrections WHERE id = $1`);
const ofChatbot = statement("corrections_of_chatbot", `SELECT ${COLUMNS} FROM corrections WHERE chatbot_id = $1 ORDER BY id`);
const count = statement("corrections_count", "SELECT count(*)::int AS n FROM corrections WHERE chatbot_id = $1");
const page = statement("corrections_page", `SELECT ${COLUMNS} FROM corrections WHERE chatbot_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`);
const insert = statement(
  "corrections_insert",
  `INSERT INTO corrections (chatbot_id, question, answer, source_name, source_url, created_at, updated_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
);
// Question and answer are never null, so null keeps them; the optional fields say whether they are set (null clears them).
const update = statement(
  "corrections_update",
  `UPDATE corrections SET question = coalesce($2, question), answer = coalesce($3, answer),
     source_name = CASE WHEN $4::boolean THEN $5 ELSE source_name END,
     source_url = CASE WHEN $6::boolean THEN $7 ELSE source_url END,
     updated_at = $8
   WHERE id = $1 RETURNING ${COLUMNS}`,
);
const remove = statement("corrections_delete", "DELETE FROM corrections WHERE id = $1");
const reply = statement(
  "corrections_reply",
  `SELECT m.role, c.chatbot_id FROM messages m JOIN conversations c ON c.id = m.conversation_id
   WHERE m.id = $1 AND m.conversation_id = $2 AND NOT m.regenerated`,
);
const questionBefore = statement(
  "corrections_question_before",
  "SELECT content FROM messages WHERE conversation_id = $1 AND id < $2 AND role = 'user' AND NOT regenerated ORDER BY id DESC LIMIT 1",
);

export function createPgCorrectionStore(pool: pg.Pool): CorrectionStore {
  return {
    async page(chatbotId, { limit, offset }) {
      const [total, rows] = await Promise.all([one<{ n: number }>(pool, count, [chatbotId]), all<CorrectionRecord>(pool, page, [chatbotId, limit, offset])]);
      return { total: total!.n, rows };
    },
    ofChatbot: (chatbotId) => all<CorrectionRecord>(pool, ofChatbot, [chatbotId]),
    find: (id) => one<CorrectionRecord>(pool, byId, [id]),
    create: async (c) => (await one<CorrectionRecord>(pool, insert, [c.chatbot_id, c.question, c.answer, c.source_name, c.source_url, c.created_at, c.updated_at]))!,
    update: (id, patch) =>
      one<CorrectionRecord>(pool, update, [
        id,
        patch.question ?? null,
        patch.answer ?? null,
        patch.source_name !== undefined,
        patch.source_name ?? null,
        patch.source_url !== undefined,
        patch.source_url ?? null,
        patch.updated_at,
      ]),
    delete: async (id) => (await run(pool, remove, [id])) > 0,
    fromMessage: (conversationId, messageId, c, accepts) =>
      transaction(pool, async (tx) => {
        const found = await one<{ role: string; chatbot_id: number }>(tx, reply, [messageId, conversationId]);
        if (!found) return { refused: "missing" as const };
        if (found.role !== "assistant") return { refused: "not-reply" as const };
        const question = await one<{ content: string }>(tx, questionBefore, [conversationId, messageId]);
        if (!question) return { refused: "no-question" as const };
        if (!accepts(question.content)) return { refused: "unmatchable" as const };
        return (await one<CorrectionRecord>(tx, insert, [found.chatbot_id, question.content, c.answer, c.source_name, c.source_url, c.created_at, c.updated_at]))!;
      }),
  };
}
