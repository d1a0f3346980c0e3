import type { Db } from "./db/open.js";
import type { BudgetExhaustedPayload } from "./widget-budgets.js";

export const EVENT_NAMES = ["lead_captured", "conversation_started", "conversation_ended", "message_received", "budget_exhausted"] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** `agent` in event payloads: the chatbot the event happened with. */
export interface AgentRef {
  id: number;
  name: string;
  slug: string;
}

/** `lead_captured` data: the spec's lead webhook shape. */
export interface LeadPayload {
  id: number;
  name: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  message: string | null;
  source: string;
  source_url: string | null;
  agent: AgentRef;
  conversation_id: number;
  session_id: string;
  created_at: string;
}

/** `conversation_started` data: the spec's conversation webhook shape. */
export interface ConversationPayload {
  id: number;
  session_id: string;
  status: "active" | "ended";
  source: string;
  source_url: string | null;
  agent: AgentRef;
  visitor: { name: string | null; email: string | null; ip: string | null; country: string | null };
  started_at: string;
  created_at: string;
}

/** `conversation_ended` data: the conversation shape with the closing figures. */
export interface ConversationEndedPayload extends ConversationPayload {
  status: "ended";
  ended_at: string;
  duration_seconds: number;
  message_count: number;
}

/** `message_received` data. */
export interface MessageReceivedPayload {
  id: number;
  conversation_id: number;
  session_id: string;
  role: "user" | "assistant";
  content: string;
  agent: AgentRef;
  created_at: string;
}

export interface EventPayloads {
  lead_captured: LeadPayload;
  conversation_started: ConversationPayload;
  conversation_ended: ConversationEndedPayload;
  message_received: MessageReceivedPayload;
  budget_exhausted: BudgetExhaustedPayload;
}

export type DomainEvent = { [N in EventName]: { name: N; organizationId: number; data: EventPayloads[N] } }[EventName];

/** One entry of a send-message reply's `actions`: what an event set in motion. */
export interface EventAction {
  type: "webhook";
  event: EventName;
  deliveries: number;
}

/**
 * Runs inside the write transaction that caused the event (e.g. the webhook
 * outbox writing its delivery rows); returns how many deliveries it queued.
 * Throwing rolls the whole change back.
 */
export type TransactionalHook = (tx: Db, event: DomainEvent) => number;

export type EventListener<N extends EventName = EventName> = (event: { name: N; organizationId: number; data: EventPayloads[N] }) => unknown;

export interface EventBus {
  /** Listen to an event after its transaction committed. Returns an unsubscribe function. */
  on<N extends EventName>(name: N | "*", listener: EventListener<N>): () => void;
  addTransactionalHook(hook: TransactionalHook): void;
  /**
   * Runs `fn` in one `BEGIN IMMEDIATE` transaction. Events passed to `emit`
   * reach the transactional hooks at once and the listeners after commit; if
   * `fn` throws, nothing is written and no listener hears anything.
   */
  transaction<T>(db: Db, fn: (tx: Db, emit: (event: DomainEvent) => EventAction) => T): T;
}

export function createEventBus(reportError: (error: unknown) => void = (e) => console.error("chatsvc: event listener failed", e)): EventBus {
  const listeners = new Map<EventName | "*", Set<EventListener>>();
  const hooks: TransactionalHook[] = [];

  const deliver = (event: DomainEvent) => {
    for (const key of [event.name, "*"] as const) {
      for (const listener of listeners.get(key) ?? []) {
        try {
          const result = listener(event as never);
          if (result instanceof Promise) result.catch(reportError);
        } catch (error) {
          reportError(error);
        }
      }
    }
  };

  return {
    on(name, listener) {
      let set = listeners.get(name);
      if (!set) listeners.set(name, (set = new Set()));
      set.add(listener as EventListener);
      return () => void set.delete(listener as EventListener);
    },

    addTransactionalHook(hook) {
      hooks.push(hook);
    },

    transaction(db, fn) {
      const fired: DomainEvent[] = [];
      const result = db.transaction(
        (tx) =>
          fn(tx as unknown as Db, (event) => {
            let deliveries = 0;
            for (const hook of hooks) deliveries += hook(tx as unknown as Db, event);
            fired.push(event);
            return { type: "webhook", event: event.name, deliveries };
          }),
        { behavior: "immediate" },
      );
      for (const event of fired) deliver(event);
      return result;
    },
  };
}
