import type { ConversationRecord } from "../../core/conversations.js";
import { conversationRecordSchema, leadSchema } from "../schemas/index.js";
import type { Lead } from "../../core/leads.js";
import { ok } from "../envelope.js";
import type { RouteDefinition } from "../router.js";

const agent = { id: 1, name: "Support bot", slug: "support" };

/** Example of a lead record: the `lead_captured` payload plus `updated_at`. */
export const SAMPLE_LEAD: Lead = {
  id: 1,
  name: "Ana Silva",
  email: "ana@example.com",
  phone: "+351 912 345 678",
  company: "Example Ltd",
  message: "Please call me about the business plan.",
  source: "api",
  source_url: "https://www.example.com/pricing",
  agent,
  conversation_id: 42,
  session_id: "api_3yq0Vw8m1xJdT5rKcN2bLfHs4gZaPe7u",
  created_at: "2025-01-15T10:32:07.000Z",
  updated_at: "2025-01-15T10:32:07.000Z",
};

/** Example of a conversation record: the `conversation_started` payload plus its state. */
export const SAMPLE_CONVERSATION: ConversationRecord = {
  id: 42,
  session_id: "api_3yq0Vw8m1xJdT5rKcN2bLfHs4gZaPe7u",
  status: "active",
  source: "api",
  source_url: "https://www.example.com/pricing",
  agent,
  visitor: { name: "Ana Silva", email: "ana@example.com", ip: "203.0.113.7", country: "PT" },
  started_at: "2025-01-15T10:30:00.000Z",
  created_at: "2025-01-15T10:30:00.000Z",
  visitor_id: "visitor-8c1f",
  is_ended: false,
  ended_at: null,
  last_message_at: "2025-01-15T10:31:45.000Z",
  handed_off_at: null,
  handoff_reason: null,
  message_count: 4,
};

export const sampleRoutes: RouteDefinition[] = [
  {
    method: "GET",
    path: "/sample/lead",
    operationId: "getSampleLead",
    tags: ["Samples"],
    summary: "A sample lead object, for testing integrations",
    response: { data: leadSchema },
    handler: () => ok(SAMPLE_LEAD),
  },
  {
    method: "GET",
    path: "/sample/conversation",
    operationId: "getSampleConversation",
    tags: ["Samples"],
    summary: "A sample conversation object, for testing integrations",
    response: { data: conversationRecordSchema },
    handler: () => ok(SAMPLE_CONVERSATION),
  },
];
