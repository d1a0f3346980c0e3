import { mergeDays, splitDays } from "../../core/day-counts.js";
import type { AnalyticsStore, DocumentCitations, UnansweredRow } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";

// The scope's chatbots travel as one JSON array parameter.
const IN_SCOPE = "IN (SELECT value FROM json_each(@ids))";
const DAY = (column: string) => `substr(${column}, 1, 10)`;

export function createAnalyticsStore(sqlite: Sqlite): AnalyticsStore {
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
  // The WHERE repeats messages_unanswered_idx's condition word for word, so SQLite may use that partial
  // index; left to itself it walked every message of the range through messages_analytics_idx (3x slower at 1M messages).
  const unanswered = sqlite.prepare<Record<string, unknown>, Omit<UnansweredRow, "cannot_answer" | "bad_rating"> & { cannot_answer: number; bad_rating: number }>(
    `SELECT a.conversation_id, a.created_at AS asked_at, a.cannot_answer, coalesce(a.rating = 'bad', 0) AS bad_rating,
            (SELECT u.content FROM messages u WHERE u.conversation_id = a.conversation_id AND u.role = 'user' AND u.id < a.id
              ORDER BY u.id DESC LIMIT 1) AS question
       FROM messages a INDEXED BY messages_unanswered_idx JOIN conversations c ON c.id = a.conversation_id
      WHERE role = 'assistant' AND regenerated = 0 AND (cannot_answer = 1 OR rating = 'bad')
        AND a.created_at >= @since AND a.created_at <= @until AND c.chatbot_id ${IN_SCOPE}
      ORDER BY a.created_at DESC, a.id DESC`,
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
      return unanswered
        .all({ ids: JSON.stringify(chatbot_ids), since, until })
        .map((row) => ({ ...row, cannot_answer: row.cannot_answer !== 0, bad_rating: row.bad_rating !== 0 }));
    },
    async citations(chatbotIds) {
      return citations.all({ ids: JSON.stringify(chatbotIds) });
    },
  };
}
