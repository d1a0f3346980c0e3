import type { DomainEvent, EventName } from "../events.js";
import type { RecordedEvent } from "./events.js";

/** A stored webhook (`events` JSON text of event names). */
export interface WebhookRecord {
  id: number;
  organization_id: number;
  name: string;
  url: string;
  events: string;
  secret: string;
  is_active: boolean;
  total_triggers: number;
  failed_triggers: number;
  last_triggered_at: string | null;
  last_failure_at: string | null;
  last_failure_status: number | null;
  last_failure_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookRegistration {
  organization_id: number;
  url: string;
  events: EventName[];
  /** Kept when null on update. */
  name: string | null;
  /** For a new webhook: its name when none was given, and its secret. */
  default_name: string;
  secret: string;
  now: string;
}

export interface WebhookStore {
  /**
   * One transaction: checks the organisation exists; updates its webhook with
   * the same URL (events, name when given, active again) or inserts a new one.
   */
  register(registration: WebhookRegistration): Promise<{ created: boolean; webhook: WebhookRecord } | "no-organization">;
  /** Of one organisation, or all; oldest first. */
  list(organizationId?: number): Promise<WebhookRecord[]>;
  find(id: number): Promise<WebhookRecord | undefined>;
  /** One transaction: deletes the organisation's webhook with its deliveries. */
  delete(id: number, organizationId: number): Promise<"deleted" | "missing" | "forbidden">;
}

/** A due delivery, claimed (leased) for sending. */
export interface DueDelivery {
  id: number;
  webhook_id: number;
  /** Standard Webhooks `webhook-id`, stable across retries. */
  message_id: string;
  /** The exact bytes to send and sign. */
  payload: string;
  attempts: number;
  url: string;
  secret: string;
}

/** The outcome of one attempt, as the worker decided to record it. */
export interface AttemptRecord {
  delivery_id: number;
  webhook_id: number;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  /** Epoch ms: the retry time when pending, else when it finished. */
  next_attempt_at: number;
  /** The receiver's HTTP status, null when none came. */
  http_status: number | null;
  error: string | null;
  /** Count the event on the webhook (its first attempt). */
  first_attempt: boolean;
  /** The receiver answered 410: deactivate the webhook and fail its pending deliveries with `error`. */
  gone: boolean;
  now: string;
}

/**
 * The webhook outbox. Rows are written by the transaction that records an
 * event (the engine fans each event out to the organisation's active webhooks
 * subscribed to it, with the payload the outbox encoder gives); the worker
 * claims due rows with a lease so an instance that dies mid-delivery loses nothing.
 */
export interface OutboxStore {
  /** One transaction: records an event that comes with no other stored change (its outbox rows only). */
  record(event: DomainEvent): Promise<RecordedEvent>;
  /**
   * One transaction: records finished attempts (a row another instance finished
   * or that was deleted is skipped; the webhook's counters move with the row),
   * then claims up to `limit` due rows of active webhooks, oldest due first,
   * leasing each until `leaseUntil` (epoch ms).
   */
  settle(attempts: AttemptRecord[], claim: { now: number; limit: number; leaseUntil: number }): Promise<DueDelivery[]>;
  /** Epoch ms of the earliest pending delivery of an active webhook (may be past, or leased). */
  nextDue(): Promise<number | undefined>;
  /** Makes these pending rows due at `now` (a stopping worker hands back what it did not finish). */
  release(deliveryIds: number[], now: number): Promise<void>;
  /** Deletes finished rows that finished before `before` (epoch ms). */
  prune(before: number): Promise<void>;
}

/** Turns a domain event into the bytes its outbox rows carry; the webhooks layer supplies it. */
export type OutboxEncoder = (name: EventName, data: unknown) => string;
