import { conversationOf, type DomainEvent } from "../../core/events.js";
import { timePrefix } from "../../core/sorted-ids.js";
import type { OutboxEncoder, RecordedEvent } from "../../core/storage/index.js";
import { run, statement, type Queryable } from "./client.js";

/*
 * One statement fans an event out to the outbox: a row per active webhook of the
 * organisation subscribed to it, each with its own Standard Webhooks id. Event
 * names are distinct words, so the quoted name is found only in hooks listing it.
 * Ids start with the time (as on SQLite), so new rows append to the message_id index.
 * Its eight parameters are numbered from `p`, so it can follow other writes in one
 * statement, whose rows `from` may join and `when` may require; `payload` and
 * `conversation` are the expressions of the payload and of the conversation's id
 * (parameters p + 2 and p + 6 by default).
 */
export const fanOutSql = (p: number, { payload = `$${p + 2}`, conversation = `$${p + 6}::int`, from = "", when = "true" } = {}) =>
  `INSERT INTO webhook_deliveries (webhook_id, message_id, event, payload, conversation_id, status, attempts, next_attempt_at, created_at, updated_at)
   SELECT w.id, 'msg_' || $${p + 7} || left(replace(gen_random_uuid()::text, '-', ''), 20), $${p + 1}, ${payload}, ${conversation}, 'pending', 0, $${p + 3}, $${p + 4}, $${p + 4}
     FROM webhooks w${from} WHERE w.organization_id = $${p} AND w.is_active AND strpos(w.events, $${p + 5}) > 0 AND ${when}`;

/**
 * The values of {@link fanOutSql} for `event` and its encoded `payload`, in its parameters' order;
 * `conversationId` null when the statement's `conversation` expression supplies it.
 */
export function fanOutValues(event: DomainEvent, payload: string, conversationId = conversationOf(event)): unknown[] {
  const now = new Date();
  return [event.organizationId, event.name, payload, now.getTime(), now.toISOString(), `"${event.name}"`, conversationId, timePrefix(now.getTime())];
}

const fanOut = statement("outbox_fan_out", fanOutSql(1));

/**
 * Writes an event's outbox rows inside the transaction that caused it.
 *
 * @example
 * const recorded = await recordEvent(tx, encode, event, () => outbox.queued());
 */
export async function recordEvent(tx: Queryable, encode: OutboxEncoder, event: DomainEvent): Promise<RecordedEvent> {
  return { event, deliveries: await run(tx, fanOut, fanOutValues(event, encode(event.name, event.data))) };
}
