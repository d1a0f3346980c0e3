import { mergeDays, splitDays } from "../../core/day-counts.js";
import type { AnalyticsStore, DocumentCitations, QuestionGroup } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";
import type { QuestionKeying } from "./question-keys.js";

// The scope's chatbots travel as one JSON array parameter.
const IN_SCOPE = "IN (SELECT value FROM json_each(@ids))";
const DAY = (column: string) => `substr(${column}, 1, 10)`;

export function createAnalyticsStore(sqlite: Sqlite, keying: QuestionKeying): AnalyticsStore {
  // Whole days come from the counters the analytics_daily triggers keep; only partial days at the ends read rows.
  const counted = sqlite.prepare<Record<string, unknown>, Record<string, number> & { day: string }>(
    `SELECT day, sum(conversations) AS conversations, sum(visitor_messages) AS visitor_messages, sum(answered) AS answered,
            sum(cannot_answer) AS cannot_answer, sum(good_ratings) AS good_ratings, sum(bad_ratings) AS bad_ratings,
            sum(leads) AS leads, sum(handoffs) AS handoffs
       FROM analytics_daily WHERE chatbot_id ${IN_SCOPE} AND day >= @first AND day <= @last
      GROUP BY day
     HAVING sum(conversations) + sum(visitor_messages) + sum(answered) + sum(cannot_answer) + sum(good_ratings) + sum(bad_ratings) + sum(leads) + sum(handoffs) > 0`,
  );
  const conversations = sqlite.prepare<Record<string, unknown>, { day: string; conversations: number }>(
    `SELECT ${DAY("started_at")} AS day, count(*) AS conversations FROM conversations
      WHERE chatbot_id ${IN_SCOPE} AND started_at >= @since AND started_at <= @until GROUP BY day`,
  );
  // Driven by the conversations active in the range, reading only messages_analytics_idx.
  const messages = sqlite.prepare<Record<string, unknown>, Record<string, number> & { day: string }>(
    `SELECT ${DAY("m.created_at")} AS day,
            sum(m.role = 'user') AS visitor_messages,
            sum(m.role = 'assistant' AND m.regenerated = 0 AND m.cannot_answer = 0 AND m.model IS NOT NULL) AS answered,
            sum(m.role = 'assistant' AND m.regenerated = 0 AND m.cannot_answer = 1) AS cannot_answer,
            sum(m.regenerated = 0 AND m.rating = 'good') AS good_ratings,
            sum(m.regenerated = 0 AND m.rating = 'bad') AS bad_ratings
       FROM conversations c JOIN messages m INDEXED BY messages_analytics_idx ON m.conversation_id = c.id
      WHERE c.chatbot_id ${IN_SCOPE} AND c.last_message_at >= @since AND c.started_at <= @until
        AND m.created_at >= @since AND m.created_at <= @until
      GROUP BY day`,
  );
  const leads = sqlite.prepare<Record<string, unknown>, { day: string; leads: number }>(
    `SELECT ${DAY("created_at")} AS day, count(*) AS leads FROM leads
      WHERE chatbot_id ${IN_SCOPE} AND created_at >= @since AND created_at <= @until GROUP BY day`,
  );
  const handoffs = sqlite.prepare<Record<string, unknown>, { day: string; handoffs: number }>(
    `SELECT ${DAY("handed_off_at")} AS day, count(*) AS handoffs FROM conversations
      WHERE chatbot_id ${IN_SCOPE} AND handed_off_at IS NOT NULL AND handed_off_at >= @since AND handed_off_at <= @until GROUP BY day`,
  );
  /*
   * The groups of unanswered_questions in scope, one page: each group's counts and its most recent row
   * (ties on time go to the later reply, as the rows sort newest first), and how many groups there are
   * (the one-row total survives a page past the end through the LEFT JOIN).
   */
  const groups = sqlite.prepare<Record<string, unknown>, { total: number; key: string | null } & Omit<QuestionGroup, "wordings">>(
    `WITH s AS (
       SELECT reply_id, conversation_id, asked_at, cannot_answer, bad_rating, question, question_key FROM unanswered_questions
        WHERE chatbot_id ${IN_SCOPE} AND asked_at >= @since AND asked_at <= @until),
     g AS (SELECT question_key, count(*) AS count, sum(cannot_answer) AS cannot_answer, sum(bad_rating) AS bad_ratings FROM s GROUP BY question_key),
     latest AS (SELECT question_key, question, asked_at, conversation_id, reply_id,
                       row_number() OVER (PARTITION BY question_key ORDER BY asked_at DESC, reply_id DESC) AS n FROM s),
     page AS (SELECT g.question_key AS key, l.question, g.count, g.cannot_answer, g.bad_ratings, l.asked_at AS last_asked_at,
                     l.conversation_id AS example_conversation_id, l.reply_id
                FROM g JOIN latest l ON l.question_key = g.question_key AND l.n = 1
               ORDER BY g.count DESC, l.asked_at DESC, l.reply_id DESC LIMIT @limit OFFSET @offset)
     SELECT t.total, page.* FROM (SELECT count(*) AS total FROM g) t LEFT JOIN page ON 1
      ORDER BY page.count DESC, page.last_asked_at DESC, page.reply_id DESC`,
  );
  // The distinct wordings of the page's groups, each at its most recent ask, the latest @wordings per group.
  const wordings = sqlite.prepare<Record<string, unknown>, { key: string; question: string }>(
    `SELECT key, question FROM (
       SELECT question_key AS key, question, row_number() OVER (PARTITION BY question_key ORDER BY asked_at DESC, reply_id DESC) AS r FROM (
         SELECT question_key, question, asked_at, reply_id,
                row_number() OVER (PARTITION BY question_key, question ORDER BY asked_at DESC, reply_id DESC) AS n
           FROM unanswered_questions
          WHERE chatbot_id ${IN_SCOPE} AND asked_at >= @since AND asked_at <= @until AND question_key IN (SELECT value FROM json_each(@keys)))
        WHERE n = 1)
      WHERE r <= @wordings ORDER BY key, r`,
  );
  const citations = sqlite.prepare<Record<string, unknown>, DocumentCitations>(
    `SELECT d.id AS document_id, d.chatbot_id, d.name, d.type, d.url, coalesce(s.cited, 0) AS cited, s.last_cited_at
       FROM documents d LEFT JOIN source_citations s ON s.chatbot_id = d.chatbot_id AND s.name = d.name
      WHERE d.chatbot_id ${IN_SCOPE}
      ORDER BY cited DESC, d.name, d.id`,
  );

  return {
    async daily({ chatbot_ids, since, until }) {
      const ids = JSON.stringify(chatbot_ids);
      const { days, edges } = splitDays(since, until);
      const parts: Array<Array<{ day: string }>> = days ? [counted.all({ ids, ...days })] : [];
      for (const edge of edges) {
        const params = { ids, ...edge };
        parts.push(conversations.all(params), messages.all(params), leads.all(params), handoffs.all(params));
      }
      return mergeDays(...parts);
    },
    async unanswered({ chatbot_ids, since, until }, page) {
      keying.keyLeftovers();
      const scope = { ids: JSON.stringify(chatbot_ids), since, until };
      const rows = groups.all({ ...scope, limit: page.limit, offset: page.offset });
      const paged = rows.filter((row) => row.key !== null);
      const found = new Map(paged.map((row) => [row.key!, [] as string[]]));
      for (const w of wordings.all({ ...scope, keys: JSON.stringify([...found.keys()]), wordings: page.wordings })) found.get(w.key)!.push(w.question);
      return {
        total: rows[0]!.total,
        groups: paged.map(({ question, count, cannot_answer, bad_ratings, last_asked_at, example_conversation_id, key }) => ({
          question,
          count,
          cannot_answer,
          bad_ratings,
          last_asked_at,
          example_conversation_id,
          wordings: found.get(key!)!,
        })),
      };
    },
    async citations(chatbotIds) {
      return citations.all({ ids: JSON.stringify(chatbotIds) });
    },
  };
}
