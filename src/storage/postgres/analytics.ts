import type pg from "pg";
import { mergeDays, splitDays } from "../../core/day-counts.js";
import type { AnalyticsStore, DocumentCitations, UnansweredRow } from "../../core/storage/index.js";

/*
 * Unnamed statements on purpose: a prepared statement's generic plan does not see
 * how wide the time range or how large the chatbot set is, and these queries
 * run for tens of milliseconds, far more than planning them each time costs.
 * Parameters: $1 the chatbot ids, $2 since, $3 until.
 */
const DAY = (column: string) => `substr(${column}, 1, 10)`;

// Whole days come from the counters the analytics_daily triggers keep; only partial days at the ends read rows.
// Parameters: $1 the chatbot ids, $2 the first whole day, $3 the last.
const COUNTED = `SELECT day, sum(conversations)::int AS conversations, sum(visitor_messages)::int AS visitor_messages, sum(answered)::int AS answered,
    sum(cannot_answer)::int AS cannot_answer, sum(good_ratings)::int AS good_ratings, sum(bad_ratings)::int AS bad_ratings,
    sum(leads)::int AS leads, sum(handoffs)::int AS handoffs
  FROM analytics_daily WHERE chatbot_id = ANY($1::int[]) AND day >= $2 AND day <= $3
  GROUP BY day
  HAVING sum(conversations) + sum(visitor_messages) + sum(answered) + sum(cannot_answer) + sum(good_ratings) + sum(bad_ratings) + sum(leads) + sum(handoffs) > 0`;

const CONVERSATIONS = `SELECT ${DAY("started_at")} AS day, count(*)::int AS conversations FROM conversations
  WHERE chatbot_id = ANY($1::int[]) AND started_at >= $2 AND started_at <= $3 GROUP BY 1`;

// Driven by the conversations active in the range; messages_analytics_idx covers every column read.
const MESSAGES = `SELECT ${DAY("m.created_at")} AS day,
    count(*) FILTER (WHERE m.role = 'user')::int AS visitor_messages,
    count(*) FILTER (WHERE m.role = 'assistant' AND NOT m.regenerated AND NOT m.cannot_answer AND m.model IS NOT NULL)::int AS answered,
    count(*) FILTER (WHERE m.role = 'assistant' AND NOT m.regenerated AND m.cannot_answer)::int AS cannot_answer,
    count(*) FILTER (WHERE NOT m.regenerated AND m.rating = 'good')::int AS good_ratings,
    count(*) FILTER (WHERE NOT m.regenerated AND m.rating = 'bad')::int AS bad_ratings
  FROM conversations c JOIN messages m ON m.conversation_id = c.id
  WHERE c.chatbot_id = ANY($1::int[]) AND c.last_message_at >= $2 AND c.started_at <= $3
    AND m.created_at >= $2 AND m.created_at <= $3
  GROUP BY 1`;

const LEADS = `SELECT ${DAY("created_at")} AS day, count(*)::int AS leads FROM leads
  WHERE chatbot_id = ANY($1::int[]) AND created_at >= $2 AND created_at <= $3 GROUP BY 1`;

const HANDOFFS = `SELECT ${DAY("handed_off_at")} AS day, count(*)::int AS handoffs FROM conversations
  WHERE chatbot_id = ANY($1::int[]) AND handed_off_at IS NOT NULL AND handed_off_at >= $2 AND handed_off_at <= $3 GROUP BY 1`;

// The WHERE repeats messages_unanswered_idx's predicate, so the planner can use that partial index.
const UNANSWERED = `SELECT a.conversation_id, a.created_at AS asked_at, a.cannot_answer, coalesce(a.rating = 'bad', false) AS bad_rating,
    (SELECT u.content FROM messages u WHERE u.conversation_id = a.conversation_id AND u.role = 'user' AND u.id < a.id
      ORDER BY u.id DESC LIMIT 1) AS question
  FROM messages a JOIN conversations c ON c.id = a.conversation_id
  WHERE a.role = 'assistant' AND NOT a.regenerated AND (a.cannot_answer OR a.rating = 'bad')
    AND a.created_at >= $2 AND a.created_at <= $3 AND c.chatbot_id = ANY($1::int[])
  ORDER BY a.created_at DESC, a.id DESC`;

const CITATIONS = `SELECT d.id AS document_id, d.chatbot_id, d.name, d.type, d.url, coalesce(s.cited, 0) AS cited, s.last_cited_at
  FROM documents d LEFT JOIN source_citations s ON s.chatbot_id = d.chatbot_id AND s.name = d.name
  WHERE d.chatbot_id = ANY($1::int[])
  ORDER BY cited DESC, d.name, d.id`;

export function createPgAnalyticsStore(pool: pg.Pool): AnalyticsStore {
  const rows = async <T extends pg.QueryResultRow>(text: string, values: unknown[]) => (await pool.query<T>(text, values)).rows;
  return {
    async daily({ chatbot_ids, since, until }) {
      const { days, edges } = splitDays(since, until);
      const queries = days ? [rows<{ day: string }>(COUNTED, [chatbot_ids, days.first, days.last])] : [];
      for (const edge of edges) {
        const values = [chatbot_ids, edge.since, edge.until];
        queries.push(...[CONVERSATIONS, MESSAGES, LEADS, HANDOFFS].map((text) => rows<{ day: string }>(text, values)));
      }
      return mergeDays(...(await Promise.all(queries)));
    },
    unanswered: ({ chatbot_ids, since, until }) => rows<UnansweredRow>(UNANSWERED, [chatbot_ids, since, until]),
    citations: (chatbotIds) => rows<DocumentCitations>(CITATIONS, [chatbotIds]),
  };
}
