import { conversationOf, type DomainEvent } from "../../core/events.js";
import { timePrefix } from "../../core/sorted-ids.js";
import type { OutboxEncoder, RecordedEvent } from "../../core/storage/index.js";
import { run, statement, type Queryable } from "./client.js";

/*
 * One statement fans an event out to the outbox: a row per active webhook of the
 * organisation subscribed to it, each with its own Standard Webhooks id. Event
 * names are distinct words, so the quoted name is found only in hooks listing it.
 * Ids start with the time (as on SQLite), so new rows append to the message_id index.
 * Its eight parameters are numbered from `p`, so it can follow another write in one statement.
 */
export const fanOutSql = (p: number) =>
  `INSERT INTO webhook_deliveries (webhook_id, message_id, event, payload, conversation_id, status, attempts, next_attempt_at, created_at, updated_at)
   SELECT id, 'msg_' || $${p + 7} || left(replace(gen_random_uuid()::text, '-', ''), 20), $${p + 1}, $${p + 2}, $${p + 6}::int, 'pending', 0, $${p + 3}, $${p + 4}, $${p + 4}
     FROM webhooks WHERE organization_id = $${p} AND is_active AND strpos(events, $${p + 5}) > 0`;

/** The values of {@link fanOutSql} for `event`, in its parameters' order. */
export function fanOutValues(encode: OutboxEncoder, event: DomainEvent): unknown[] {
  const now = new Date();
  return [event.organizationId, event.name, encode(event.name, event.data), now.getTime(), now.toISOString(), `"${event.name}"`, conversationOf(event), timePrefix(now.getTime())];
}

const fanOut = statement("outbox_fan_out", fanOutSql(1));

/**
 * Writes an event's outbox rows inside the transaction that caused it.
 *
 * @example
 * const recorded = await recordEvent(tx, encode, event, () => outbox.queued());
 */
export async function recordEvent(tx: Queryable, encode: OutboxEncoder, event: DomainEvent): Promise<RecordedEvent> {
  return { event, deliveries: await run(tx, fanOut, fanOutValues(encode, event)) };
}
