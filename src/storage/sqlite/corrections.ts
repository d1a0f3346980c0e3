import type { CorrectionRecord, CorrectionStore, NewCorrection } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";

export function createCorrectionStore(sqlite: Sqlite): CorrectionStore {
  const byId = sqlite.prepare<[number], CorrectionRecord>("SELECT * FROM corrections WHERE id = ?");
  const ofChatbot = sqlite.prepare<[number], CorrectionRecord>("SELECT * FROM corrections WHERE chatbot_id = ? ORDER BY id");
  const count = sqlite.prepare<[number], number>("SELECT COUNT(*) FROM corrections WHERE chatbot_id = ?").pluck();
  const page = sqlite.prepare<[number, number, number], CorrectionRecord>("SELECT * FROM corrections WHERE chatbot_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?");
  const insert = sqlite.prepare<NewCorrection, CorrectionRecord>(
    `INSERT INTO corrections (chatbot_id, question, answer, source_name, source_url, created_at, updated_at)
     VALUES (@chatbot_id, @question, @answer, @source_name, @source_url, @created_at, @updated_at) RETURNING *`,
  );
  // Question and answer are never null, so null keeps them; the optional fields say whether they are set (null clears them).
  const update = sqlite.prepare<Record<string, unknown>, CorrectionRecord>(
    `UPDATE corrections SET question = coalesce(@question, question), answer = coalesce(@answer, answer),
       source_name = CASE WHEN @set_source_name = 1 THEN @source_name ELSE source_name END,
       source_url = CASE WHEN @set_source_url = 1 THEN @source_url ELSE source_url END,
       updated_at = @updated_at
     WHERE id = @id RETURNING *`,
  );
  const remove = sqlite.prepare<[number]>("DELETE FROM corrections WHERE id = ?");
  const reply = sqlite.prepare<[number, number], { role: string; chatbot_id: number }>(
    `SELECT m.role, c.chatbot_id FROM messages m JOIN conversations c ON c.id = m.conversation_id
     WHERE m.id = ? AND m.conversation_id = ? AND m.regenerated = 0`,
  );
  const questionBefore = sqlite
    .prepare<[number, number], string>(
      "SELECT content FROM messages WHERE conversation_id = ? AND id < ? AND role = 'user' AND regenerated = 0 ORDER BY id DESC LIMIT 1",
    )
    .pluck();

  const fromMessage = sqlite.transaction((conversationId: number, messageId: number, correction: Omit<NewCorrection, "chatbot_id" | "question">, accepts: (question: string) => boolean) => {
    const found = reply.get(messageId, conversationId);
    if (!found) return { refused: "missing" as const };
    if (found.role !== "assistant") return { refused: "not-reply" as const };
    const question = questionBefore.get(conversationId, messageId);
    if (question === undefined) return { refused: "no-question" as const };
    if (!accepts(question)) return { refused: "unmatchable" as const };
    return insert.get({ ...correction, chatbot_id: found.chatbot_id, question })!;
  });

  return {
    async page(chatbotId, { limit, offset }) {
      return { total: count.get(chatbotId)!, rows: page.all(chatbotId, limit, offset) };
    },
    async ofChatbot(chatbotId) {
      return ofChatbot.all(chatbotId);
    },
    async find(id) {
      return byId.get(id);
    },
    async create(correction) {
      return insert.get(correction)!;
    },
    async update(id, patch) {
      return update.get({
        id,
        question: patch.question ?? null,
        answer: patch.answer ?? null,
        set_source_name: patch.source_name === undefined ? 0 : 1,
        source_name: patch.source_name ?? null,
        set_source_url: patch.source_url === undefined ? 0 : 1,
        source_url: patch.source_url ?? null,
        updated_at: patch.updated_at,
      });
    },
    async delete(id) {
      return remove.run(id).changes > 0;
    },
    async fromMessage(conversationId, messageId, correction, accepts) {
      return fromMessage.immediate(conversationId, messageId, correction, accepts);
    },
  };
}
