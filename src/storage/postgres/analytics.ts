import type pg from "pg";
import { mergeDays, splitDays } from "../../core/day-counts.js";
import type { AnalyticsStore, DocumentCitations, UnansweredWording } from "../../core/storage/index.js";
import type { PgQuestionKeying } from "./question-keys.js";

/*
 * Unnamed statements on purpose: a prepared statement's generic plan does not see
 * how wide the time range or how large the chatbot set is, and these queries
 * run for tens of milliseconds, far more than planning them each time costs.
 * Parameter $1 is always the chatbot ids; the others are placeholders passed in.
 */
const DAY = (column: string) => `substr(${column}, 1, 10)`;

// Whole days come from the counters the analytics_daily triggers keep; only partial days at the ends read rows.
const COUNTED = (first: string, last: string) => `SELECT day, sum(conversations)::int AS conversations, sum(visitor_messages)::int AS visitor_messages,
    sum(answered)::int AS answered, sum(cannot_answer)::int AS cannot_answer, sum(good_ratings)::int AS good_ratings, sum(bad_ratings)::int AS bad_ratings,
    sum(leads)::int AS leads, sum(handoffs)::int AS handoffs
  FROM analytics_daily WHERE chatbot_id = ANY($1::int[]) AND day >= ${first} AND day <= ${last}
  GROUP BY day
  HAVING sum(conversations) + sum(visitor_messages) + sum(answered) + sum(cannot_answer) + sum(good_ratings) + sum(bad_ratings) + sum(leads) + sum(handoffs) > 0`;

const CONVERSATIONS = (since: string, until: string) => `SELECT ${DAY("started_at")} AS day, count(*)::int AS conversations FROM conversations
  WHERE chatbot_id = ANY($1::int[]) AND started_at >= ${since} AND started_at <= ${until} GROUP BY 1`;

// Driven by the conversations active in the range; messages_analytics_idx covers every column read.
const MESSAGES = (since: string, until: string) => `SELECT ${DAY("m.created_at")} AS day,
    count(*) FILTER (WHERE m.role = 'user')::int AS visitor_messages,
    count(*) FILTER (WHERE m.role = 'assistant' AND NOT m.regenerated AND NOT m.cannot_answer AND m.model IS NOT NULL)::int AS answered,
    count(*) FILTER (WHERE m.role = 'assistant' AND NOT m.regenerated AND m.cannot_answer)::int AS cannot_answer,
    count(*) FILTER (WHERE NOT m.regenerated AND m.rating = 'good')::int AS good_ratings,
    count(*) FILTER (WHERE NOT m.regenerated AND m.rating = 'bad')::int AS bad_ratings
  FROM conversations c JOIN messages m ON m.conversation_id = c.id
  WHERE c.chatbot_id = ANY($1::int[]) AND c.last_message_at >= ${since} AND c.started_at <= ${until}
    AND m.created_at >= ${since} AND m.created_at <= ${until}
  GROUP BY 1`;

const LEADS = (since: string, until: string) => `SELECT ${DAY("created_at")} AS day, count(*)::int AS leads FROM leads
  WHERE chatbot_id = ANY($1::int[]) AND created_at >= ${since} AND created_at <= ${until} GROUP BY 1`;

const HANDOFFS = (since: string, until: string) => `SELECT ${DAY("handed_off_at")} AS day, count(*)::int AS handoffs FROM conversations
  WHERE chatbot_id = ANY($1::int[]) AND handed_off_at IS NOT NULL AND handed_off_at >= ${since} AND handed_off_at <= ${until} GROUP BY 1`;

/*
 * One row per distinct wording in scope ($2 since, $3 until). `latest` carries the most recent reply's time,
 * id (zero-padded, so the greatest string is the latest reply even at equal times; compared bytewise) and conversation.
 */
const WORDINGS = `SELECT question_key AS key, question, count(*)::int AS count, (count(*) FILTER (WHERE cannot_answer))::int AS cannot_answer,
    (count(*) FILTER (WHERE bad_rating))::int AS bad_ratings,
    max((asked_at || ' ' || lpad(reply_id::text, 15, '0') || ' ' || conversation_id) COLLATE "C") AS latest
  FROM unanswered_questions WHERE chatbot_id = ANY($1::int[]) AND asked_at >= $2 AND asked_at <= $3
  GROUP BY question_key, question`;

const CITATIONS = `SELECT d.id AS document_id, d.chatbot_id, d.name, d.type, d.url, coalesce(s.cited, 0) AS cited, s.last_cited_at
  FROM documents d LEFT JOIN source_citations s ON s.chatbot_id = d.chatbot_id AND s.name = d.name
  WHERE d.chatbot_id = ANY($1::int[])
  ORDER BY cited DESC, d.name, d.id`;

export function createPgAnalyticsStore(pool: pg.Pool, keying: PgQuestionKeying): AnalyticsStore {
  const rows = async <T extends pg.QueryResultRow>(text: string, values: unknown[]) => (await pool.query<T>(text, values)).rows;
  return {
    async daily({ chatbot_ids, since, until }) {
      // One statement, so one round trip: the counters and every partial day's queries, each part's counts as JSON.
      const values: unknown[] = [chatbot_ids];
      const param = (value: string) => `$${values.push(value)}`;
      const { days, edges } = splitDays(since, until);
      const parts = days ? [COUNTED(param(days.first), param(days.last))] : [];
      for (const edge of edges) {
        const [from, to] = [param(edge.since), param(edge.until)];
        parts.push(CONVERSATIONS(from, to), MESSAGES(from, to), LEADS(from, to), HANDOFFS(from, to));
      }
      const text = parts.map((part) => `SELECT day, to_jsonb(q) - 'day' AS counts FROM (${part}) q`).join("\nUNION ALL\n");
      const found = await rows<{ day: string; counts: Record<string, number> }>(text, values);
      return mergeDays(found.map(({ day, counts }) => ({ day, ...counts })));
    },
    async unanswered({ chatbot_ids, since, until }) {
      await keying.keyLeftovers();
      const found = await rows<Omit<UnansweredWording, "last_asked_at" | "last_reply_id" | "last_conversation_id"> & { latest: string }>(WORDINGS, [chatbot_ids, since, until]);
      return found.map(({ latest, ...wording }) => {
        const [at, reply, conversation] = latest.split(" ");
        return { ...wording, last_asked_at: at!, last_reply_id: Number(reply), last_conversation_id: Number(conversation) };
      });
    },
    citations: (chatbotIds) => rows<DocumentCitations>(CITATIONS, [chatbotIds]),
  };
}
