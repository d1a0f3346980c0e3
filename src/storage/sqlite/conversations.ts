import type {
  Charge,
  ConversationRecord,
  ConversationRef,
  ConversationStore,
  CreditRecord,
  EventOf,
  HandlingChange,
  MessageRecord,
  NewConversation,
  NewMessage,
  RecordedEvent,
  TurnRefusal,
} from "../../core/storage/index.js";
import { likePattern } from "../../core/like-pattern.js";
import type { CommitBatch } from "./commit-batch.js";
import type { Recorder } from "./events.js";
import type { Sqlite } from "./open.js";
import type { QuestionKeying } from "./question-keys.js";
import type { WriteGate } from "./write-gate.js";

type MessageRow = Omit<MessageRecord, "regenerated" | "cannot_answer"> & { regenerated: number; cannot_answer: number };

const toMessage = (row: MessageRow): MessageRecord => ({ ...row, regenerated: row.regenerated !== 0, cannot_answer: row.cannot_answer !== 0 });

const SELECT = `SELECT c.*, b.organization_id, b.name AS agent_name, b.slug AS agent_slug
  FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id`;

const FILTERS = `b.organization_id = @organization_id AND (@chatbot_id IS NULL OR c.chatbot_id = @chatbot_id)
  AND (@since IS NULL OR c.started_at >= @since) AND (@until IS NULL OR c.started_at <= @until)
  AND (@status IS NULL OR @status = CASE WHEN c.ended_at IS NOT NULL THEN 'ended' WHEN c.handling = 'human' THEN 'human' ELSE 'active' END)`;

/*
 * The list page's own filters (exports leave them out): a rating among the visible replies, or
 * none rated; text in a visible message, by LIKE (ASCII case folding), its wildcards escaped.
 */
const PAGE_FILTERS = `${FILTERS}
  AND (@rating IS NULL
    OR (@rating = 'unrated' AND NOT EXISTS (SELECT 1 FROM messages r WHERE r.conversation_id = c.id AND r.regenerated = 0 AND r.rating IS NOT NULL))
    OR (@rating <> 'unrated' AND EXISTS (SELECT 1 FROM messages r WHERE r.conversation_id = c.id AND r.regenerated = 0 AND r.rating = @rating)))
  AND (@pattern IS NULL OR EXISTS (SELECT 1 FROM messages t WHERE t.conversation_id = c.id AND t.regenerated = 0 AND t.content LIKE @pattern ESCAPE '\\'))`;

type Charger = (charge: Charge) => { ok: boolean; credits: CreditRecord };

export function createConversationStore(sqlite: Sqlite, record: Recorder, charge: Charger, keying: QuestionKeying, batched: CommitBatch, gate: WriteGate): ConversationStore {
  const byId = sqlite.prepare<[number], ConversationRecord>(`${SELECT} WHERE c.id = ?`);
  const insert = sqlite.prepare<Record<string, unknown>, number>(
    `INSERT INTO conversations (chatbot_id, session_id, visitor_id, visitor_name, visitor_email, visitor_phone, metadata, source, source_url, ip, country, started_at, last_message_at)
     VALUES (@chatbot_id, @session_id, @visitor_id, @visitor_name, @visitor_email, @visitor_phone, @metadata, @source, @source_url, @ip, @country, @started_at, @last_message_at) RETURNING id`,
  ).pluck();
  const markEnded = sqlite.prepare<[string, number]>("UPDATE conversations SET ended_at = ? WHERE id = ? AND ended_at IS NULL");
  const touch = sqlite.prepare<[string, number]>("UPDATE conversations SET last_message_at = ? WHERE id = ?");
  const handle = sqlite.prepare<Record<string, unknown>>(
    `UPDATE conversations SET handling = @handling,
       handed_off_at = CASE WHEN @handling = 'human' THEN COALESCE(handed_off_at, @at) ELSE handed_off_at END,
       handoff_reason = CASE WHEN @handling = 'human' THEN @reason ELSE handoff_reason END
     WHERE id = @id`,
  );
  const countPage = sqlite.prepare<Record<string, unknown>, number>(`SELECT COUNT(*) FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id WHERE ${PAGE_FILTERS}`).pluck();
  const listPage = sqlite.prepare<Record<string, unknown>, ConversationRecord & { message_count: number }>(
    `SELECT c.*, b.organization_id, b.name AS agent_name, b.slug AS agent_slug,
            (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id AND m.regenerated = 0) AS message_count
       FROM conversations c JOIN chatbots b ON b.id = c.chatbot_id
      WHERE ${PAGE_FILTERS} ORDER BY c.started_at DESC, c.id DESC LIMIT @limit OFFSET @offset`,
  );

  const exportPage = sqlite.prepare<Record<string, unknown>, ConversationRecord>(
    `${SELECT} WHERE ${FILTERS} AND c.id > @after ORDER BY c.id LIMIT @limit`,
  );
  const visibleOf = sqlite.prepare<[string], MessageRow>(
    "SELECT * FROM messages WHERE conversation_id IN (SELECT value FROM json_each(?)) AND regenerated = 0 ORDER BY conversation_id, id",
  );
  const visible = sqlite.prepare<[number], MessageRow>("SELECT * FROM messages WHERE conversation_id = ? AND regenerated = 0 ORDER BY id");
  // The ids first, from the conversation's index entries: sorting whole rows would read every message's content.
  const latest = sqlite.prepare<[{ conversation: number; before: number | null; limit: number }], MessageRow>(
    `SELECT * FROM messages WHERE id IN (
       SELECT id FROM messages WHERE conversation_id = @conversation AND regenerated = 0 AND (@before IS NULL OR id < @before) ORDER BY id DESC LIMIT @limit
     ) ORDER BY id DESC`,
  );
  const countVisible = sqlite.prepare<[number], number>("SELECT COUNT(*) FROM messages WHERE conversation_id = ? AND regenerated = 0").pluck();
  const messageById = sqlite.prepare<[number, number], MessageRow>("SELECT * FROM messages WHERE id = ? AND conversation_id = ?");
  const lastAssistant = sqlite
    .prepare<[number], number>("SELECT id FROM messages WHERE conversation_id = ? AND role = 'assistant' AND regenerated = 0 ORDER BY id DESC LIMIT 1")
    .pluck();
  const insertMessage = sqlite.prepare<Record<string, unknown>, MessageRow>(
    `INSERT INTO messages (conversation_id, role, content, sources, model, response_ms, cannot_answer, agent_name, created_at)
     VALUES (@conversation_id, @role, @content, @sources, @model, @response_ms, @cannot_answer, @agent_name, @created_at) RETURNING *`,
  );
  // One citation per reply and document name, however many of its chunks the reply quoted.
  const cite = sqlite.prepare<Record<string, unknown>>(
    `INSERT INTO source_citations (chatbot_id, name, cited, last_cited_at)
     SELECT @chatbot_id, name, 1, @at FROM (SELECT DISTINCT json_extract(value, '$.name') AS name FROM json_each(@sources)) WHERE name IS NOT NULL
     ON CONFLICT (chatbot_id, name) DO UPDATE SET cited = cited + 1, last_cited_at = excluded.last_cited_at`,
  );
  const setRating = sqlite.prepare<[string, number]>("UPDATE messages SET rating = ? WHERE id = ?");
  // A bad rating may give the reply an unanswered_questions row, keyed in the same transaction.
  const rate = sqlite.transaction((messageId: number, rating: "good" | "bad") => {
    setRating.run(rating, messageId);
    if (rating === "bad") keying.keyQuestions();
  });
  const flagRegenerated = sqlite.prepare<[number]>("UPDATE messages SET regenerated = 1 WHERE id = ?");

  const addMessage = (conversationId: number, m: NewMessage): MessageRecord =>
    toMessage(
      insertMessage.get({
        conversation_id: conversationId,
        role: m.role,
        content: m.content,
        sources: m.sources ?? "[]",
        model: m.model ?? null,
        response_ms: m.response_ms ?? null,
        cannot_answer: m.cannot_answer ? 1 : 0,
        agent_name: m.agent_name ?? null,
        created_at: m.created_at,
      })!,
    );

  /** Stores a bot reply; a fallback gets an unanswered_questions row (trigger), keyed here in the same transaction. */
  const addReply = (conversationId: number, m: NewMessage): MessageRecord => {
    const reply = addMessage(conversationId, m);
    if (reply.cannot_answer) keying.keyQuestions();
    return reply;
  };

  /** Counts the documents a stored bot reply cites (for the sources report). */
  const recordCitations = (chatbotId: number, reply: MessageRecord) => {
    if (reply.sources !== "[]") cite.run({ chatbot_id: chatbotId, sources: reply.sources, at: reply.created_at });
  };

  /** Inside a write transaction: the conversation as the caller addresses it, still open, or why not. */
  const recheck = (ref: ConversationRef): ConversationRecord | TurnRefusal => {
    if (ref.signal?.aborted) return { refused: "aborted" };
    const row = byId.get(ref.id);
    if (!row || (ref.chatbot_id !== undefined && row.chatbot_id !== ref.chatbot_id) || (ref.organization_id !== undefined && row.organization_id !== ref.organization_id)) {
      return { refused: "missing" };
    }
    if (row.ended_at !== null) return { refused: "ended" };
    return row;
  };
  const refused = (x: ConversationRecord | TurnRefusal): x is TurnRefusal => "refused" in x;

  const start = sqlite.transaction((conversation: NewConversation, event: EventOf<ConversationRecord>) => {
    const c = conversation;
    const id = insert.get({
      chatbot_id: c.chatbot_id,
      session_id: c.session_id,
      visitor_id: c.visitor_id,
      visitor_name: c.visitor_name,
      visitor_email: c.visitor_email,
      visitor_phone: c.visitor_phone,
      metadata: c.metadata,
      source: c.source,
      source_url: c.source_url,
      ip: c.ip,
      country: c.country,
      started_at: c.started_at,
      last_message_at: c.last_message_at,
    })!;
    // Everything the stored row holds is known here, so it is not read back.
    const result: ConversationRecord = { id, ...conversation, handling: "bot", handed_off_at: null, handoff_reason: null };
    return { result, events: [record(event(result))] };
  });

  const end = sqlite.transaction((id: number, endedAt: string, event: EventOf<{ conversation: ConversationRecord & { ended_at: string }; message_count: number }>) => {
    const closedHere = markEnded.run(endedAt, id).changes > 0;
    const row = byId.get(id);
    if (!row) return undefined;
    const ended = { conversation: row as ConversationRecord & { ended_at: string }, message_count: countVisible.get(id)! };
    return { result: { ...ended, closed_here: closedHere }, events: closedHere ? [record(event(ended))] : [] };
  });

  const storeTurn = sqlite.transaction(
    (ref: ConversationRef, turn: { user: NewMessage; assistant: NewMessage; charge: Charge }, event: EventOf<{ conversation: ConversationRecord; user: MessageRecord }>) => {
      const conversation = recheck(ref);
      if (refused(conversation)) return conversation;
      const charged = charge(turn.charge);
      if (!charged.ok) return { refused: "credits" as const, credits: charged.credits };
      const user = addMessage(conversation.id, turn.user);
      const assistant = addReply(conversation.id, turn.assistant);
      recordCitations(conversation.chatbot_id, assistant);
      touch.run(assistant.created_at, conversation.id);
      const fresh = { ...conversation, last_message_at: assistant.created_at };
      return { result: { conversation: fresh, user, assistant, credits: charged.credits }, events: [record(event({ conversation: fresh, user }))] };
    },
  );

  const storeRegeneration = sqlite.transaction((ref: ConversationRef, replaces: number, message: NewMessage, toCharge: Charge) => {
    const conversation = recheck(ref);
    if (refused(conversation)) return conversation;
    if (lastAssistant.get(conversation.id) !== replaces) return { refused: "not-latest" as const };
    const charged = charge(toCharge);
    if (!charged.ok) return { refused: "credits" as const, credits: charged.credits };
    flagRegenerated.run(replaces);
    const assistant = addReply(conversation.id, message);
    recordCitations(conversation.chatbot_id, assistant);
    touch.run(assistant.created_at, conversation.id);
    return { conversation: { ...conversation, last_message_at: assistant.created_at }, assistant, credits: charged.credits };
  });

  const storeMessage = sqlite.transaction(
    (ref: ConversationRef, message: NewMessage, event?: EventOf<{ conversation: ConversationRecord; message: MessageRecord }>) => {
      const conversation = recheck(ref);
      if (refused(conversation)) return conversation;
      const stored = addMessage(conversation.id, message);
      touch.run(stored.created_at, conversation.id);
      const fresh = { ...conversation, last_message_at: stored.created_at };
      const events: RecordedEvent[] = event ? [record(event({ conversation: fresh, message: stored }))] : [];
      return { result: { conversation: fresh, message: stored }, events };
    },
  );

  const setHandling = sqlite.transaction((ref: ConversationRef, change: HandlingChange, event?: EventOf<ConversationRecord>) => {
    const conversation = recheck(ref);
    if (refused(conversation)) return conversation;
    if (conversation.handling === change.handling) return { result: { conversation, changed: false }, events: [] };
    handle.run({ id: conversation.id, handling: change.handling, at: change.at, reason: change.reason ?? null });
    const fresh = byId.get(conversation.id)!;
    return { result: { conversation: fresh, changed: true }, events: event ? [record(event(fresh))] : [] };
  });

  return {
    async start(conversation, event) {
      // Many visitors open conversations at once: their starts share a commit.
      return batched(() => start(conversation, event));
    },
    async find(id) {
      return byId.get(id);
    },
    async end(id, endedAt, event) {
      return gate.run(() => end.immediate(id, endedAt, event));
    },
    async page({ rating = null, text = null, ...filter }, { limit, offset }) {
      const params = { ...filter, rating, pattern: likePattern(text) };
      return { total: countPage.get(params)!, rows: listPage.all({ ...params, limit, offset }) };
    },
    async *exportPages(filter, pageSize) {
      for (let after = 0; ; ) {
        const rows = exportPage.all({ ...filter, status: null, after, limit: pageSize });
        if (rows.length === 0) return;
        const byConversation = new Map(rows.map((row) => [row.id, { ...row, messages: [] as MessageRecord[] }]));
        for (const m of visibleOf.all(JSON.stringify(rows.map((r) => r.id)))) byConversation.get(m.conversation_id)!.messages.push(toMessage(m));
        yield [...byConversation.values()];
        if (rows.length < pageSize) return;
        after = rows.at(-1)!.id;
      }
    },
    async messages(conversationId) {
      return visible.all(conversationId).map(toMessage);
    },
    async latestMessages(conversationId, limit, beforeId) {
      return latest.all({ conversation: conversationId, before: beforeId ?? null, limit }).map(toMessage);
    },
    async countMessages(conversationId) {
      return countVisible.get(conversationId)!;
    },
    async findMessage(conversationId, messageId) {
      const row = messageById.get(messageId, conversationId);
      return row && toMessage(row);
    },
    async rate(messageId, rating) {
      return gate.run(() => void rate.immediate(messageId, rating));
    },
    async storeTurn(ref, turn, event) {
      // Under load, replies finish together: their turns share a commit.
      return batched(() => storeTurn(ref, turn, event));
    },
    async storeRegeneration(ref, replaces, assistant, toCharge) {
      return gate.run(() => storeRegeneration.immediate(ref, replaces, assistant, toCharge));
    },
    async setHandling(ref, change, event) {
      return gate.run(() => setHandling.immediate(ref, change, event));
    },
    async storeMessage(ref, message, event) {
      return gate.run(() => storeMessage.immediate(ref, message, event));
    },
  };
}
