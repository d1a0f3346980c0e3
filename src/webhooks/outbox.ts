import { randomUUID } from "node:crypto";
import type { Sqlite } from "../core/db/open.js";
import type { DomainEvent, TransactionalHook } from "../core/events.js";

/**
 * The transactional outbox: for each event, one `webhook_deliveries` row per
 * active webhook of the event's organisation subscribed to it, written by the
 * transaction that made the change. A rolled-back change therefore sends
 * nothing, and a committed one cannot lose its deliveries to a crash.
 * `onQueued` runs when rows were written (the worker defers its reaction past
 * the commit).
 *
 * @example
 * events.addTransactionalHook(createOutboxHook(db.$client, () => worker.wake()));
 */
export function createOutboxHook(sqlite: Sqlite, onQueued: () => void): TransactionalHook {
  // Event names are distinct words, so the quoted name is found only in hooks that list it.
  const subscribers = sqlite.prepare<[number, string], { id: number }>(
    "SELECT id FROM webhooks WHERE organization_id = ? AND is_active = 1 AND instr(events, ?) > 0",
  );
  const insert = sqlite.prepare<[number, string, string, string, number, string, string]>(
    "INSERT INTO webhook_deliveries (webhook_id, message_id, event, payload, status, attempts, next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?)",
  );

  return (_tx, event: DomainEvent) => {
    const hooks = subscribers.all(event.organizationId, `"${event.name}"`);
    if (hooks.length === 0) return 0;
    // Serialised once: every subscriber receives (and is signed over) the same bytes.
    const payload = JSON.stringify({ event: event.name, data: event.data });
    const now = new Date();
    const iso = now.toISOString();
    for (const hook of hooks) insert.run(hook.id, `msg_${randomUUID().replace(/-/g, "")}`, event.name, payload, now.getTime(), iso, iso);
    onQueued();
    return hooks.length;
  };
}
