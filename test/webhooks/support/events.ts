import type { EventAction } from "../../../src/chat/chat.js";
import type { DomainEvent } from "../../../src/core/events.js";
import { internalsOf, type ChatService } from "../../../src/service.js";

const agent = { id: 1, name: "Demo", slug: "demo" };
const at = "2025-01-02T03:04:05.000Z";

/** Payloads of the events in the shapes DESIGN.md and the README fix. */
export function sampleEvent(name: DomainEvent["name"], organizationId: number, id = 1): DomainEvent {
  const conversation = {
    id,
    session_id: `api_session_${id}`,
    status: "active" as const,
    source: "api",
    source_url: null,
    agent,
    visitor: { name: "Ada", email: "ada@example.com", ip: "203.0.113.7", country: "GB" },
    started_at: at,
    created_at: at,
  };
  switch (name) {
    case "conversation_started":
      return { name, organizationId, data: conversation };
    case "conversation_ended":
      return { name, organizationId, data: { ...conversation, status: "ended", ended_at: at, duration_seconds: 42, message_count: 4 } };
    case "message_received":
      return { name, organizationId, data: { id, conversation_id: 7, session_id: "api_session_7", role: "user", content: "Hello?", agent, created_at: at } };
    case "lead_captured":
      return {
        name,
        organizationId,
        data: {
          id,
          name: "Ada",
          email: "ada@example.com",
          phone: "+44 20 7946 0000",
          company: null,
          message: "Call me",
          source: "api",
          source_url: null,
          agent,
          conversation_id: 7,
          session_id: "api_session_7",
          created_at: at,
        },
      };
    case "budget_exhausted":
      return {
        name,
        organizationId,
        data: { agent, budget: "chatbot_per_hour", limit: 200, period_start: "2025-01-02T03:00:00.000Z", resets_at: "2025-01-02T04:00:00.000Z", exhausted_at: at },
      };
    case "handoff_requested":
      return {
        name,
        organizationId,
        data: { ...conversation, status: "human", visitor_id: "visitor-1", reason: "I want a refund", handed_off_at: at, requested_at: at },
      };
  }
}

/** Records an event the way a write does (its outbox rows in one transaction), then tells the service's listeners. */
export async function emit(service: ChatService, event: DomainEvent): Promise<EventAction> {
  const { storage, events } = internalsOf(service);
  const recorded = await storage.outbox.record(event);
  events.publish([recorded]);
  return { type: "webhook", event: event.name, deliveries: recorded.deliveries };
}
