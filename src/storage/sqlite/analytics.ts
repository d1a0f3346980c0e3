import { mergeDays, splitDays } from "../../core/day-counts.js";
import type { AnalyticsStore, DocumentCitations, UnansweredWording } from "../../core/storage/index.js";
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
   * One row per distinct wording in scope: one pass over unanswered_questions_scope_idx's range.
   * `latest` carries the most recent reply's time, id (zero-padded, so the greatest string is the
   * latest reply even at equal times) and conversation.
   */
  const wordings = sqlite.prepare<Record<string, unknown>, Omit<UnansweredWording, "last_asked_at" | "last_reply_id" | "last_conversation_id"> & { latest: string }>(
    `SELECT question_key AS key, question, count(*) AS count, sum(cannot_answer) AS cannot_answer, sum(bad_rating) AS bad_ratings,
            max(asked_at || ' ' || printf('%015d', reply_id) || ' ' || conversation_id) AS latest
       FROM unanswered_questions WHERE chatbot_id ${IN_SCOPE} AND asked_at >= @since AND asked_at <= @until
      GROUP BY question_key, question`,
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
    async unanswered({ chatbot_ids, since, until }) {
      keying.keyLeftovers();
      return wordings.all({ ids: JSON.stringify(chatbot_ids), since, until }).map(({ latest, ...wording }) => {
        const [at, reply, conversation] = latest.split(" ");
        return { ...wording, last_asked_at: at!, last_reply_id: Number(reply), last_conversation_id: Number(conversation) };
      });
    },
    async citations(chatbotIds) {
      return citations.all({ ids: JSON.stringify(chatbotIds) });
    },
  };
}
