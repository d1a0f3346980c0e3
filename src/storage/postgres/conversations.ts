import type pg from "pg";
import type {
  ConversationRecord,
  ConversationRef,
  ConversationStore,
  CreditRecord,
  MessageRecord,
  NewMessage,
  OutboxEncoder,
  RecordedEvent,
  TurnRefusal,
} from "../../core/storage/index.js";
import type { DomainEvent } from "../../core/events.js";
import { likePattern } from "../../core/like-pattern.js";
import { all, one, run, statement, transaction, type Queryable } from "./client.js";
import { CHARGE, chargeCredits, refusingCredits } from "./credits.js";
import { fanOutSql, fanOutValues, recordEvent } from "./events.js";
import type { PgQuestionKeying } from "./question-keys.js";

const RECORD = `c.id, c.chatbot_id, c.session_id, c.visitor_id, c.visitor_name, c.visitor_email, c.visitor_phone, c.metadata,
  c.source, c.source_url, c.ip, c.country, c.started_at, c.last_message_at, c.ended_at, c.handling, c.handed_off_at, c.handoff_reason,
  b.organization_id, b.name AS agent_name, b.slug AS agent_slug`;
const MESSAGE = "id, conversation_id, role, content, sources, model, response_ms, rating, regenerated, cannot_answer, agent_name, created_at";
const FILTERS = `b.organization_id = $1 AND ($2::int IS NULL OR c.chatbot_id = $2)
  AND ($3::text IS NULL OR c.started_at >= $3) AND ($4::text IS NULL OR c.started_at <= $4)
  AND ($5::text IS NULL OR $5 = CASE WHEN c.ended_at IS NOT NULL THEN 'ended' WHEN c.handling = 'human' THEN 'human' ELSE 'active' END)`;
/*
 * The list page's own filters (exports leave them out), on parameters `$r` and `$t`: a rating
 * among the visible replies, or none rated; text in a visible message (ILIKE, wildcards escaped).
 */
const PAGE_FILTERS = (r: number, t: number) => `${FILTERS}
  AND ($${r}::text IS NULL
    OR ($${r} = 'unrated' AND NOT EXISTS (SELECT 1 FROM messages x WHERE x.conversation_id = c.id AND NOT x.regenerated AND x.rating IS NOT NULL))
    OR ($${r} <> 'unrated' AND EXISTS (SELECT 1 FROM messages x WHERE x.conversation_id = c.id AND NOT x.regenerated AND x.rating = $${r})))
  AND ($${t}::text IS NULL OR EXISTS (SELECT 1 FROM messages y WHERE y.conversation_id = c.id AND NOT y.regenerated AND y.content ILIKE $${t} ESCAPE '\\'))`;

/*
 * A conversation and its `conversation_started` outbox rows are one statement, committed on its own: the
 * analytics trigger's row for the chatbot's day, which every start of that chatbot updates, stays locked
 * only until that commit, not across a transaction's round trips and the event loop's turns between them.
 * The row takes its id from the sequence; the event's payload is encoded before, with a placeholder number
 * ($15) the statement replaces with that id, as a turn's does.
 */
const insertStarted = statement(
  "conversations_insert_started",
  `WITH c AS (
     INSERT INTO conversations (chatbot_id, session_id, visitor_id, visitor_name, visitor_email, visitor_phone, metadata, source, source_url, ip, country, started_at, last_message_at, ended_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
     RETURNING id
   ), f AS (${fanOutSql(16, { payload: "replace($18, $15, c.id::text)", conversation: "coalesce($22::int, c.id)", from: ", c" })} RETURNING 1)
   SELECT c.id, (SELECT count(*)::int FROM f) AS deliveries FROM c`,
);
const byId = statement("conversations_by_id", `SELECT ${RECORD} FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id WHERE c.id = $1`);
// Every write to a conversation locks its row first: a turn and an end (or two turns) on one
// conversation queue, so "ended" and "latest reply" checks hold until commit.
const lock = statement("conversations_lock", `SELECT ${RECORD} FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id WHERE c.id = $1 FOR UPDATE OF c`);
const handle = statement(
  "conversations_handle",
  `UPDATE conversations SET handling = $2,
     handed_off_at = CASE WHEN $2 = 'human' THEN COALESCE(handed_off_at, $3) ELSE handed_off_at END,
     handoff_reason = CASE WHEN $2 = 'human' THEN $4 ELSE handoff_reason END
   WHERE id = $1`,
);
const markEnded = statement("conversations_mark_ended", "UPDATE conversations SET ended_at = $2 WHERE id = $1 AND ended_at IS NULL");
const countPage = statement("conversations_count_page", `SELECT count(*)::int AS n FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id WHERE ${PAGE_FILTERS(6, 7)}`);
const listPage = statement(
  "conversations_list_page",
  `SELECT ${RECORD}, (SELECT count(*)::int FROM messages m WHERE m.conversation_id = c.id AND NOT m.regenerated) AS message_count
     FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id WHERE ${PAGE_FILTERS(8, 9)}
    ORDER BY c.started_at DESC, c.id DESC LIMIT $6 OFFSET $7`,
);
const exportPage = statement(
  "conversations_export_page",
  `SELECT ${RECORD} FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id WHERE ${FILTERS} AND c.id > $6 ORDER BY c.id LIMIT $7`,
);
const visibleOf = statement(
  "messages_visible_of",
  `SELECT ${MESSAGE} FROM messages WHERE conversation_id = ANY($1::int[]) AND NOT regenerated ORDER BY conversation_id, id`,
);
const visible = statement("messages_visible", `SELECT ${MESSAGE} FROM messages WHERE conversation_id = $1 AND NOT regenerated ORDER BY id`);
const latest = statement(
  "messages_latest",
  `SELECT ${MESSAGE} FROM messages WHERE conversation_id = $1 AND NOT regenerated AND ($3::int IS NULL OR id < $3) ORDER BY id DESC LIMIT $2`,
);
const countVisible = statement("messages_count_visible", "SELECT count(*)::int AS n FROM messages WHERE conversation_id = $1 AND NOT regenerated");
const messageById = statement("messages_by_id", `SELECT ${MESSAGE} FROM messages WHERE id = $2 AND conversation_id = $1`);
const latestAssistant = statement(
  "messages_latest_assistant",
  "SELECT id FROM messages WHERE conversation_id = $1 AND role = 'assistant' AND NOT regenerated ORDER BY id DESC LIMIT 1",
);
const rate = statement("messages_rate", "UPDATE messages SET rating = $2 WHERE id = $1");
const flagRegenerated = statement("messages_flag_regenerated", "UPDATE messages SET regenerated = true WHERE id = $1");
const MESSAGE_VALUES = (n: number) => `($1, $${n}, $${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}, $${n + 7})`;
/**
 * Counts the documents a stored reply's `sources` (parameter `$n`) cite, one per document
 * name, for the sources report; a message without sources inserts nothing.
 */
const CITE = (sources: number, at: number, when = "true") => `s AS (
     INSERT INTO source_citations (chatbot_id, name, cited, last_cited_at)
     SELECT (SELECT chatbot_id FROM conversations WHERE id = $1), name, 1, $${at}
       FROM (SELECT DISTINCT e->>'name' AS name FROM jsonb_array_elements($${sources}::jsonb) e) cited WHERE name IS NOT NULL AND ${when}
     ON CONFLICT (chatbot_id, name) DO UPDATE SET cited = source_citations.cited + 1, last_cited_at = excluded.last_cited_at
   )`;
// Storing messages, counting the reply's citations and moving `last_message_at` to the last one's time is one statement.
const insertMessage = statement(
  "messages_insert",
  `WITH m AS (
     INSERT INTO messages (conversation_id, role, content, sources, model, response_ms, cannot_answer, agent_name, created_at)
     VALUES ${MESSAGE_VALUES(2)} RETURNING ${MESSAGE}
   ), t AS (UPDATE conversations SET last_message_at = $9 WHERE id = $1), ${CITE(4, 9)}
   SELECT * FROM m`,
);
/*
 * A turn is one statement, committed on its own: it locks the conversation (refusing an ended one,
 * or one of another chatbot or organisation), takes the two message ids after the lock (so a
 * conversation's messages keep the order they were stored in), charges (writing nothing more when
 * the credits do not allow it), stores both messages, moves `last_message_at`, counts the reply's
 * citations, inserts a fallback's unanswered_questions row with its key (the trigger's own insert
 * then finds it) and fans `message_received` out. The organisation's credit row, the chatbot's
 * analytics row and the citation rows every turn updates are held only until that commit, not
 * across a transaction's round trips and the event loop's turns between them. The event's payload
 * is encoded before the visitor message has its id, with a placeholder number ($26) the statement
 * replaces. Citations wait for the messages, and so for the charge: an organisation's turns queue on
 * its credit row before they lock any document's citation row.
 */
const writeTurn = statement(
  "conversations_write_turn",
  `WITH conv AS (
     SELECT c.id, c.chatbot_id FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id
      WHERE c.id = $1 AND c.ended_at IS NULL AND ($24::int IS NULL OR c.chatbot_id = $24) AND ($25::int IS NULL OR b.organization_id = $25)
        FOR UPDATE OF c
   ), ids AS (SELECT nextval('messages_id_seq')::int AS id FROM conv, generate_series(1, 2)),
   pair AS (SELECT min(id) AS u, max(id) AS a FROM ids HAVING count(*) = 2),
   ${CHARGE(2, 3, 4, "EXISTS (SELECT 1 FROM pair)")},
   m AS (
     INSERT INTO messages (id, conversation_id, role, content, sources, model, response_ms, cannot_answer, agent_name, created_at)
     SELECT v.* FROM pair, charge, LATERAL (VALUES
       (pair.u, $1::int, $6::text, $7::text, $8::text, $9::text, $10::int, $11::boolean, $12::text, $13::text),
       (pair.a, $1::int, $14::text, $15::text, $16::text, $17::text, $18::int, $19::boolean, $20::text, $21::text)) v
     RETURNING id
   ), t AS (UPDATE conversations SET last_message_at = $5 WHERE id = $1 AND EXISTS (SELECT 1 FROM m)),
   ${CITE(16, 5, "EXISTS (SELECT 1 FROM m)")},
   q AS (
     INSERT INTO unanswered_questions (reply_id, chatbot_id, conversation_id, asked_at, cannot_answer, bad_rating, question, question_key)
     SELECT pair.a, conv.chatbot_id, $1, $21, true, false, $22, $23 FROM pair, conv WHERE $22::text IS NOT NULL AND EXISTS (SELECT 1 FROM m)
   ), f AS (${fanOutSql(27, { payload: "replace($29, $26, pair.u::text)", from: ", pair", when: "EXISTS (SELECT 1 FROM m)" })} RETURNING 1)
   SELECT (SELECT count(*)::int FROM conv) AS open, pair.u, pair.a, charge.month, charge.credits_used, charge.credits_max, (SELECT count(*)::int FROM f) AS deliveries
     FROM (SELECT) one LEFT JOIN pair ON true LEFT JOIN charge ON true`,
);

const countOf = async (q: Queryable, conversationId: number) => (await one<{ n: number }>(q, countVisible, [conversationId]))!.n;

/** A message as stored with id `id`: what the row holds, so it is not read back. */
const storedMessage = (id: number, conversationId: number, m: NewMessage): MessageRecord => ({
  id,
  conversation_id: conversationId,
  role: m.role,
  content: m.content,
  sources: m.sources ?? "[]",
  model: m.model ?? null,
  response_ms: m.response_ms ?? null,
  rating: null,
  regenerated: false,
  cannot_answer: m.cannot_answer ?? false,
  agent_name: m.agent_name ?? null,
  created_at: m.created_at,
});

/** A new message's columns in the order the insert statements take them. */
const messageValues = (m: NewMessage) => {
  const row = storedMessage(0, 0, m);
  return [row.role, row.content, row.sources, row.model, row.response_ms, row.cannot_answer, row.agent_name, row.created_at];
};

/** Stores a message and moves the conversation's `last_message_at` to its time. */
const storeOne = async (tx: Queryable, conversationId: number, m: NewMessage) => (await one<MessageRecord>(tx, insertMessage, [conversationId, ...messageValues(m)]))!;

/** Why a write to `conversation` as `ref` addresses it is refused: gone (or another chatbot's or organisation's), or ended. */
function refusalOf(conversation: ConversationRecord | undefined, ref: ConversationRef): TurnRefusal | undefined {
  if (
    !conversation ||
    (ref.chatbot_id !== undefined && conversation.chatbot_id !== ref.chatbot_id) ||
    (ref.organization_id !== undefined && conversation.organization_id !== ref.organization_id)
  ) {
    return { refused: "missing" };
  }
  if (conversation.ended_at !== null) return { refused: "ended" };
  return undefined;
}

/** Locks the conversation and re-checks what the caller checked before its transaction. */
async function recheck(tx: Queryable, ref: ConversationRef): Promise<ConversationRecord | TurnRefusal> {
  const conversation = await one<ConversationRecord>(tx, lock, [ref.id]);
  return refusalOf(conversation, ref) ?? conversation!;
}

const isRefusal = (value: object): value is TurnRefusal => "refused" in value;

/** Thrown inside a transaction to roll it back and answer a refusal. */
class Refused {
  constructor(readonly refusal: TurnRefusal) {}
}

/** Runs a conversation write: aborted callers are refused before it begins; a {@link Refused} rolls it back. */
async function write<T>(pool: pg.Pool, ref: ConversationRef, fn: (tx: pg.PoolClient, conversation: ConversationRecord) => Promise<T>): Promise<T | TurnRefusal> {
  if (ref.signal?.aborted) return { refused: "aborted" };
  try {
    return await transaction(pool, async (tx) => {
      const conversation = await recheck(tx, ref);
      if (isRefusal(conversation)) throw new Refused(conversation);
      return fn(tx, conversation);
    });
  } catch (error) {
    if (error instanceof Refused) return error.refusal;
    throw error;
  }
}

async function charged(tx: Queryable, charge: Parameters<typeof chargeCredits>[1]): Promise<CreditRecord> {
  const result = await chargeCredits(tx, charge);
  if ("refused" in result) throw new Refused({ refused: "credits", credits: result.refused });
  return result.charged;
}

export function createPgConversationStore(pool: pg.Pool, encode: OutboxEncoder, onQueued: (deliveries: number) => void, keying: PgQuestionKeying): ConversationStore {
  const find = (q: Queryable, id: number) => one<ConversationRecord>(q, byId, [id]);
  /** Publishes nothing: hands the recorded events back, and tells the outbox when rows were queued (after commit). */
  const queued = <T extends { events: RecordedEvent[] }>(result: T): T => {
    const deliveries = result.events.reduce((n, e) => n + e.deliveries, 0);
    if (deliveries > 0) onQueued(deliveries);
    return result;
  };
  const queuedIfWritten = <T>(result: T | TurnRefusal): T | TurnRefusal =>
    typeof result === "object" && result !== null && "events" in result ? queued(result as T & { events: RecordedEvent[] }) : result;

  return {
    async start(conversation, event) {
      // Everything the stored row holds is known here, so it is not read back.
      const record = (id: number): ConversationRecord => ({ id, ...conversation, handling: "bot", handed_off_at: null, handoff_reason: null });
      const drafted = withIdPlaceholder((id) => event(record(id)), encode);
      const c = conversation;
      const written = (await one<{ id: number; deliveries: number }>(pool, insertStarted, [
        c.chatbot_id,
        c.session_id,
        c.visitor_id,
        c.visitor_name,
        c.visitor_email,
        c.visitor_phone,
        c.metadata,
        c.source,
        c.source_url,
        c.ip,
        c.country,
        c.started_at,
        c.last_message_at,
        c.ended_at,
        drafted.placeholder,
        // The delivery rows' conversation id is the new row's (the drafted event's placeholder would not fit the column).
        ...fanOutValues(drafted.event, drafted.payload, null),
      ]))!;
      const stored = record(written.id);
      return queued({ result: stored, events: [{ event: event(stored), deliveries: written.deliveries }] });
    },

    find: (id) => find(pool, id),

    async end(id, endedAt, event) {
      const result = await transaction(pool, async (tx) => {
        const closedHere = (await run(tx, markEnded, [id, endedAt])) > 0;
        const conversation = await find(tx, id);
        if (!conversation) return undefined;
        const ended = { conversation: conversation as ConversationRecord & { ended_at: string }, message_count: await countOf(tx, id) };
        const events = closedHere ? [await recordEvent(tx, encode, event(ended))] : [];
        return { result: { ...ended, closed_here: closedHere }, events };
      });
      return result && queued(result);
    },

    async page(filter, { limit, offset }) {
      const values = [filter.organization_id, filter.chatbot_id, filter.since, filter.until, filter.status];
      const extra = [filter.rating ?? null, likePattern(filter.text)];
      const [count, rows] = await Promise.all([
        one<{ n: number }>(pool, countPage, [...values, ...extra]),
        all<ConversationRecord & { message_count: number }>(pool, listPage, [...values, limit, offset, ...extra]),
      ]);
      return { total: count!.n, rows };
    },

    async *exportPages(filter, pageSize) {
      const values = [filter.organization_id, filter.chatbot_id, filter.since, filter.until, null];
      for (let after = 0; ; ) {
        const rows = await all<ConversationRecord>(pool, exportPage, [...values, after, pageSize]);
        if (rows.length === 0) return;
        const byConversation = new Map(rows.map((row) => [row.id, { ...row, messages: [] as MessageRecord[] }]));
        for (const m of await all<MessageRecord>(pool, visibleOf, [rows.map((r) => r.id)])) byConversation.get(m.conversation_id)!.messages.push(m);
        yield [...byConversation.values()];
        if (rows.length < pageSize) return;
        after = rows.at(-1)!.id;
      }
    },

    messages: (conversationId) => all<MessageRecord>(pool, visible, [conversationId]),
    latestMessages: (conversationId, limit, beforeId) => all<MessageRecord>(pool, latest, [conversationId, limit, beforeId ?? null]),
    countMessages: (conversationId) => countOf(pool, conversationId),
    findMessage: (conversationId, messageId) => one<MessageRecord>(pool, messageById, [conversationId, messageId]),
    async rate(messageId, rating) {
      if (rating === "good") {
        await run(pool, rate, [messageId, rating]);
        return;
      }
      // A bad rating may give the reply an unanswered_questions row, keyed in the same transaction.
      await transaction(pool, async (tx) => {
        await run(tx, rate, [messageId, rating]);
        await keying.keyReply(tx, messageId);
      });
    },

    async storeTurn(ref, turn, event) {
      if (ref.signal?.aborted) return { refused: "aborted" };
      const conversation = await find(pool, ref.id);
      const early = refusalOf(conversation, ref);
      if (early) return early;
      const updated = { ...conversation!, last_message_at: turn.assistant.created_at };
      const visitorMessage = (id: number) => storedMessage(id, updated.id, turn.user);
      const drafted = withIdPlaceholder((id) => event({ conversation: updated, user: visitorMessage(id) }), encode);
      const fallback = turn.assistant.cannot_answer ? keying.keyed(turn.user.content) : undefined;
      const { organization_id, month, cost } = turn.charge;
      // A caller that gave up meanwhile (the read above may have waited for a connection) gets nothing written.
      if (ref.signal?.aborted) return { refused: "aborted" };
      const written = (await one<{ open: number; u: number | null; a: number | null; deliveries: number } & Partial<CreditRecord>>(pool, writeTurn, [
        updated.id,
        organization_id,
        month,
        cost,
        updated.last_message_at,
        ...messageValues(turn.user),
        ...messageValues(turn.assistant),
        fallback?.question ?? null,
        fallback?.key ?? null,
        ref.chatbot_id ?? null,
        ref.organization_id ?? null,
        drafted.placeholder,
        ...fanOutValues(drafted.event, drafted.payload),
      ]))!;
      if (written.open === 0) return refusalOf(await find(pool, ref.id), ref) ?? { refused: "missing" };
      if (written.credits_used == null) return { refused: "credits", credits: await refusingCredits(pool, organization_id, month) };
      const user = visitorMessage(written.u!);
      const assistant = storedMessage(written.a!, updated.id, turn.assistant);
      const credits = { month: written.month!, credits_used: written.credits_used, credits_max: written.credits_max! };
      return queued({ result: { conversation: updated, user, assistant, credits }, events: [{ event: event({ conversation: updated, user }), deliveries: written.deliveries }] });
    },

    storeRegeneration: (ref, replaces, reply, charge) =>
      write(pool, ref, async (tx, conversation) => {
        const latest = await one<{ id: number }>(tx, latestAssistant, [conversation.id]);
        if (latest?.id !== replaces) throw new Refused({ refused: "not-latest" });
        const credits = await charged(tx, charge);
        await run(tx, flagRegenerated, [replaces]);
        const assistant = await storeOne(tx, conversation.id, reply);
        if (assistant.cannot_answer) await keying.keyReply(tx, assistant.id);
        return { conversation: { ...conversation, last_message_at: assistant.created_at }, assistant, credits };
      }),

    setHandling: async (ref, change, event) =>
      queuedIfWritten(
        await write(pool, ref, async (tx, conversation) => {
          if (conversation.handling === change.handling) return { result: { conversation, changed: false }, events: [] as RecordedEvent[] };
          await run(tx, handle, [conversation.id, change.handling, change.at, change.reason ?? null]);
          const updated = (await find(tx, conversation.id))!;
          return { result: { conversation: updated, changed: true }, events: event ? [await recordEvent(tx, encode, event(updated))] : [] };
        }),
      ),

    storeMessage: async (ref, message, event) =>
      queuedIfWritten(
        await write(pool, ref, async (tx, conversation) => {
          const stored = await storeOne(tx, conversation.id, message);
          const updated = { ...conversation, last_message_at: stored.created_at };
          const events = event ? [await recordEvent(tx, encode, event({ conversation: updated, message: stored }))] : [];
          return { result: { conversation: updated, message: stored }, events };
        }),
      ),
  };
}

/**
 * An event whose encoded payload may carry an id the statement assigns: built and encoded with a
 * placeholder number for it, one that occurs nowhere else in the payload (a visitor may type any
 * number, so another is drawn when it does), for the statement to replace.
 */
function withIdPlaceholder(build: (id: number) => DomainEvent, encode: OutboxEncoder): { placeholder: string; event: DomainEvent; payload: string } {
  for (let tries = 0; tries < 8; tries++) {
    // Above any id a PostgreSQL integer holds, and still exact as a JavaScript number.
    const id = 2 ** 52 + Math.floor(Math.random() * 2 ** 51);
    const event = build(id);
    const payload = encode(event.name, event.data);
    const placeholder = String(id);
    if (payload.split(placeholder).length <= 2) return { placeholder, event, payload };
  }
  throw new Error("chatsvc: no placeholder for the visitor message's id is unique in the event's encoding");
}
