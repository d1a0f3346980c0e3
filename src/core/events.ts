import type { RecordedEvent } from "./storage/events.js";
import type { BudgetExhaustedPayload } from "./widget-budgets.js";

export const EVENT_NAMES = ["lead_captured", "conversation_started", "conversation_ended", "message_received", "budget_exhausted", "handoff_requested"] as const;
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
  /** `human` while a person answers instead of the bot. */
  status: "active" | "human" | "ended";
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

/** `handoff_requested` data: the conversation shape, now handled by a person, and why the visitor asked. */
export interface HandoffRequestedPayload extends ConversationPayload {
  status: "human";
  visitor_id: string | null;
  /** What the visitor said about why, when they said anything. */
  reason: string | null;
  /** The first time the conversation went to a person (earlier than `requested_at` when it went before). */
  handed_off_at: string;
  requested_at: string;
}

export interface EventPayloads {
  lead_captured: LeadPayload;
  conversation_started: ConversationPayload;
  conversation_ended: ConversationEndedPayload;
  message_received: MessageReceivedPayload;
  budget_exhausted: BudgetExhaustedPayload;
  handoff_requested: HandoffRequestedPayload;
}

export type DomainEvent = { [N in EventName]: { name: N; organizationId: number; data: EventPayloads[N] } }[EventName];

export type EventListener<N extends EventName = EventName> = (event: { name: N; organizationId: number; data: EventPayloads[N] }) => unknown;

export interface EventBus {
  /** Listen to an event after its transaction committed. Returns an unsubscribe function. */
  on<N extends EventName>(name: N | "*", listener: EventListener<N>): () => void;
  /** Hear every committed event with the outbox rows it queued (the webhook worker wakes on it). */
  onRecorded(listener: (recorded: RecordedEvent) => void): void;
  /** Hands committed events to the listeners; call once the write that recorded them resolved. */
  publish(recorded: RecordedEvent[]): void;
}

/**
 * In-process listeners of domain events. Events are recorded by the storage
 * write that causes them (see core/storage); this bus only tells listeners
 * about them after commit. A listener that throws is reported, never the writer.
 */
export function createEventBus(reportError: (error: unknown) => void = (e) => console.error("chatsvc: event listener failed", e)): EventBus {
  const listeners = new Map<EventName | "*", Set<EventListener>>();
  const recordedListeners: ((recorded: RecordedEvent) => void)[] = [];

  const call = (listener: (value: never) => unknown, value: unknown) => {
    try {
      const result = listener(value as never);
      if (result instanceof Promise) result.catch(reportError);
    } catch (error) {
      reportError(error);
    }
  };

  return {
    on(name, listener) {
      let set = listeners.get(name);
      if (!set) listeners.set(name, (set = new Set()));
      set.add(listener as EventListener);
      return () => void set.delete(listener as EventListener);
    },

    onRecorded(listener) {
      recordedListeners.push(listener);
    },

    publish(recorded) {
      for (const entry of recorded) {
        for (const listener of recordedListeners) call(listener, entry);
        const { event } = entry;
        for (const key of [event.name, "*"] as const) {
          for (const listener of listeners.get(key) ?? []) call(listener, event);
        }
      }
    },
  };
}

/**
 * The conversation an event's payload is about, or null: the outbox keeps it
 * beside the payload so erasing a visitor finds the deliveries that would
 * still send their data. A new event must say here (the switch is exhaustive).
 */
export function conversationOf(event: DomainEvent): number | null {
  switch (event.name) {
    case "conversation_started":
    case "conversation_ended":
    case "handoff_requested":
      return event.data.id;
    case "message_received":
    case "lead_captured":
      return event.data.conversation_id;
    case "budget_exhausted":
      return null;
  }
}
