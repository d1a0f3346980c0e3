import type pg from "pg";
import type { StorageOptions } from "../../core/storage/index.js";
import { all, one, run, statement, transaction, type Queryable } from "./client.js";

const replyQuestion = statement("unanswered_reply_question", "SELECT question FROM unanswered_questions WHERE reply_id = $1 AND question_key IS NULL");
const setKey = statement("unanswered_set_key", "UPDATE unanswered_questions SET question = $2, question_key = $3 WHERE reply_id = $1");
// The WHERE repeats unanswered_questions_unkeyed_idx's condition, so these read that (normally empty) index.
const anyUnkeyed = statement("unanswered_any_unkeyed", "SELECT 1 AS found FROM unanswered_questions WHERE question_key IS NULL LIMIT 1");
// Locked in reply order, so reports keying the same leftovers at once queue instead of deadlocking.
const lockUnkeyed = statement(
  "unanswered_lock_unkeyed",
  "SELECT reply_id, question FROM unanswered_questions WHERE question_key IS NULL ORDER BY reply_id FOR UPDATE",
);
const setKeys = statement(
  "unanswered_set_keys",
  `UPDATE unanswered_questions u SET question = v.question, question_key = v.key
     FROM unnest($1::int[], $2::text[], $3::text[]) AS v(reply_id, question, key) WHERE u.reply_id = v.reply_id`,
);

/**
 * Fills `question_key` of unanswered_questions rows, trimming their question. Triggers keep the
 * rows exact under every write (SQL cannot stem, so they leave the key null); the turns,
 * regenerations and ratings that add a row key it in their own transaction (`keyReply`), and a
 * report first keys rows SQL added outside the service (the migration's backfill, db copy, bulk
 * seeds; `keyLeftovers`), so a report never groups a row without its key.
 */
export function createPgQuestionKeying(pool: pg.Pool, questionKey: StorageOptions["questionKey"]) {
  /** The question and key a row for a reply to the visitor message `content` holds. */
  const keyed = (content: string): { question: string; key: string } => {
    const question = content.trim();
    return { question, key: questionKey(question) };
  };
  return {
    /** {@link keyed}, for a write that adds the row itself. */
    keyed,
    /** Inside the transaction that stored or rated reply `replyId`: keys its row, if it has one without a key. */
    async keyReply(tx: Queryable, replyId: number) {
      const row = await one<{ question: string }>(tx, replyQuestion, [replyId]);
      if (!row) return;
      const { question, key } = keyed(row.question);
      await run(tx, setKey, [replyId, question, key]);
    },
    /** Before a report: keys every row left without a key, in a transaction of its own when there are some. */
    async keyLeftovers() {
      if (!(await one(pool, anyUnkeyed))) return;
      await transaction(pool, async (tx) => {
        const rows = await all<{ reply_id: number; question: string }>(tx, lockUnkeyed);
        const keys = rows.map((r) => keyed(r.question));
        await run(tx, setKeys, [rows.map((r) => r.reply_id), keys.map((k) => k.question), keys.map((k) => k.key)]);
      });
    },
  };
}

export type PgQuestionKeying = ReturnType<typeof createPgQuestionKeying>;
