import { conversationOf, type DomainEvent } from "../../core/events.js";
import { timePrefix } from "../../core/sorted-ids.js";
import type { OutboxEncoder, RecordedEvent } from "../../core/storage/index.js";
import { run, statement, type Queryable } from "./client.js";

/*
 * One statement fans an event out to the outbox: a row per active webhook of the
 * organisation subscribed to it, each with its own Standard Webhooks id. Event
 * names are distinct words, so the quoted name is found only in hooks listing it.
 * Ids start with the time (as on SQLite), so new rows append to the message_id index.
 */
const fanOut = statement(
  "outbox_fan_out",
  `INSERT INTO webhook_deliveries (webhook_id, message_id, event, payload, conversation_id, status, attempts, next_attempt_at, created_at, updated_at)
   SELECT id, 'msg_' || $8 || left(replace(gen_random_uuid()::text, '-', ''), 20), $2, $3, $7::int, 'pending', 0, $4, $5, $5
     FROM webhooks WHERE organization_id = $1 AND is_active AND strpos(events, $6) > 0`,
);

/**
 * Writes an event's outbox rows inside the transaction that caused it.
 *
 * @example
 * const recorded = await recordEvent(tx, encode, event, () => outbox.queued());
 */
export async function recordEvent(tx: Queryable, encode: OutboxEncoder, event: DomainEvent): Promise<RecordedEvent> {
  const now = new Date();
  const iso = now.toISOString();
  const deliveries = await run(tx, fanOut, [event.organizationId, event.name, encode(event.name, event.data), now.getTime(), iso, `"${event.name}"`, conversationOf(event), timePrefix(now.getTime())]);
  return { event, deliveries };
}
