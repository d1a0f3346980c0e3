import { conversationOf, type DomainEvent } from "../../core/events.js";
import { timeSortedId } from "../../core/sorted-ids.js";
import type { OutboxEncoder, RecordedEvent } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";

/** Records an event inside the current write transaction: its outbox rows, one per subscribed active webhook. */
export type Recorder = (event: DomainEvent) => RecordedEvent;

/**
 * The transactional outbox's write side: for each event, one
 * `webhook_deliveries` row per active webhook of the event's organisation
 * subscribed to it. Called inside the transaction that made the change, so a
 * rolled-back change sends nothing and a committed one cannot lose its deliveries.
 */
export function createRecorder(sqlite: Sqlite, encode: OutboxEncoder): Recorder {
  // Event names are distinct words, so the quoted name is found only in hooks that list it.
  const subscribers = sqlite.prepare<[number, string], { id: number }>(
    "SELECT id FROM webhooks WHERE organization_id = ? AND is_active = 1 AND instr(events, ?) > 0",
  );
  const insert = sqlite.prepare<[number, string, string, string, number | null, number, string, string]>(
    "INSERT INTO webhook_deliveries (webhook_id, message_id, event, payload, conversation_id, status, attempts, next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)",
  );

  return (event) => {
    const hooks = subscribers.all(event.organizationId, `"${event.name}"`);
    if (hooks.length === 0) return { event, deliveries: 0 };
    // Encoded once: every subscriber receives (and is signed over) the same bytes.
    const payload = encode(event.name, event.data);
    const now = new Date();
    const iso = now.toISOString();
    const conversationId = conversationOf(event);
    // Time-sorted ids: a batch of new deliveries appends to the message_id index instead of dirtying a page per row.
    for (const hook of hooks) insert.run(hook.id, `msg_${timeSortedId(10, "hex")}`, event.name, payload, conversationId, now.getTime(), iso, iso);
    return { event, deliveries: hooks.length };
  };
}
