import type { StorageOptions } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";

/**
 * Fills `question_key` of the unanswered_questions rows that have none, trimming their question.
 * Triggers keep the rows exact under every write (SQL cannot stem, so they leave the key null);
 * the turns, regenerations and ratings that add a row call this in their own transaction, and a
 * report calls it first for rows SQL added outside the service (the migration's backfill, db copy,
 * bulk seeds), so a report never groups a row without its key. Normally it finds nothing.
 */
export function createQuestionKeying(sqlite: Sqlite, questionKey: StorageOptions["questionKey"]) {
  // The WHERE repeats unanswered_questions_unkeyed_idx's condition, so this reads that (normally empty) index.
  const unkeyed = sqlite.prepare<[], { reply_id: number; question: string }>("SELECT reply_id, question FROM unanswered_questions WHERE question_key IS NULL");
  const anyUnkeyed = sqlite.prepare<[], number>("SELECT 1 FROM unanswered_questions WHERE question_key IS NULL LIMIT 1").pluck();
  const setKey = sqlite.prepare<[string, string, number]>("UPDATE unanswered_questions SET question = ?, question_key = ? WHERE reply_id = ?");

  /** Inside a write transaction: keys every row without a key. */
  const keyQuestions = () => {
    for (const { reply_id, question } of unkeyed.all()) {
      const text = question.trim();
      setKey.run(text, questionKey(text), reply_id);
    }
  };
  const keyInTransaction = sqlite.transaction(keyQuestions);
  return {
    keyQuestions,
    /** Before a report: keys leftover rows in a transaction of its own, taking the write lock only when there are some. */
    keyLeftovers() {
      if (anyUnkeyed.get()) keyInTransaction.immediate();
    },
  };
}

export type QuestionKeying = ReturnType<typeof createQuestionKeying>;
