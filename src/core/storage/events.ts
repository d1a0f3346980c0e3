import type { DomainEvent } from "../events.js";

/**
 * Builds the event a write causes from what it wrote (the new row's id, the
 * figures only the transaction knows). Runs inside the write transaction, so it
 * must be synchronous and must not touch storage.
 */
export type EventOf<T> = (written: T) => DomainEvent;

/** An event recorded by a committed write, with the outbox rows (webhook deliveries) it queued. */
export interface RecordedEvent {
  event: DomainEvent;
  deliveries: number;
}

/** A write's result with the events it recorded, for the caller to publish after commit. */
export interface WithEvents<T> {
  result: T;
  events: RecordedEvent[];
}
