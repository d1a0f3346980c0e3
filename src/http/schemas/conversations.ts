import { z } from "zod";
import type { ConversationDetail, ConversationHistory, ConversationRecord, EndedConversation, HandoffRequested, StartedConversation } from "../../core/conversations.js";
import { agentSchema, eventActionSchema, integer, messageSchema, ratedMessageSchema, timestamp } from "./common.js";

const statusSchema = z
  .enum(["active", "human", "ended"])
  .meta({ id: "ConversationStatus", description: "`active`: the bot answers; `human`: a person answers and the bot stays silent (see the handoff endpoints); `ended`" });

export const startedConversationSchema = z
  .strictObject({
    conversation_id: integer,
    session_id: z.string().meta({ description: "Opaque; API-created sessions start with `api_`" }),
    visitor_id: z.string().nullable().meta({ description: "Echoed from the request" }),
    started_at: timestamp,
    is_ended: z.boolean(),
  })
  .meta({ id: "StartedConversation" }) satisfies z.ZodType<StartedConversation>;

export const conversationHistorySchema = z
  .strictObject({
    id: integer,
    visitor_id: z.string().nullable(),
    visitor_name: z.string().nullable(),
    visitor_email: z.string().nullable(),
    is_ended: z.boolean(),
    status: statusSchema,
    source: z.string().meta({ description: "`api` for conversations created through the chatbot API" }),
    started_at: timestamp,
    last_message_at: timestamp,
    ended_at: timestamp.nullable(),
    message_count: integer,
    messages: z.array(messageSchema).meta({ description: "Regenerated replies are left out" }),
  })
  .meta({ id: "ConversationHistory" }) satisfies z.ZodType<ConversationHistory>;

export const conversationRecordSchema = z
  .strictObject({
    id: integer,
    session_id: z.string(),
    status: statusSchema,
    source: z.string(),
    source_url: z.string().nullable(),
    agent: agentSchema,
    visitor: z.strictObject({
      name: z.string().nullable(),
      email: z.string().nullable(),
      ip: z.string().nullable(),
      country: z.string().nullable().meta({ description: "Two-letter country code" }),
    }),
    started_at: timestamp,
    created_at: timestamp,
    visitor_id: z.string().nullable(),
    is_ended: z.boolean(),
    ended_at: timestamp.nullable(),
    last_message_at: timestamp,
    message_count: integer,
    handed_off_at: timestamp.nullable().meta({ description: "The first time the conversation went to a person (operator takeover or visitor request); never cleared" }),
    handoff_reason: z.string().nullable().meta({ description: "Why it went to a person the last time, when someone said" }),
  })
  .meta({ id: "Conversation", description: "The conversation webhook shape plus its state" }) satisfies z.ZodType<ConversationRecord>;

export const conversationDetailSchema = conversationRecordSchema
  .extend({ messages: z.array(ratedMessageSchema) })
  .meta({ id: "ConversationDetail" }) satisfies z.ZodType<ConversationDetail>;

export const endedConversationSchema = z
  .strictObject({
    message: z.string(),
    conversation_id: integer,
    ended_at: timestamp,
    duration_seconds: integer,
    message_count: integer,
  })
  .meta({ id: "EndedConversation" }) satisfies z.ZodType<EndedConversation>;

export const handoffRequestedSchema = z
  .strictObject({
    conversation_id: integer,
    status: z.literal("human"),
    handed_off_at: timestamp.meta({ description: "The first time the conversation went to a person" }),
    actions: z.array(eventActionSchema).meta({ description: "`handoff_requested` deliveries; empty when a person already had the conversation" }),
  })
  .meta({ id: "HandoffRequested" }) satisfies z.ZodType<HandoffRequested>;
