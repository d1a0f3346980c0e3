import { z } from "zod";
import type { EventAction } from "../../chat/chat.js";
import { EVENT_NAMES, type AgentRef } from "../../core/events.js";
import type { Message, RatedMessage, Source } from "../../core/messages.js";
import type { PageLinks, PageMeta } from "../../core/pagination.js";

/*
 * Response schemas describe what the service answers. They are the source of
 * the OpenAPI document's response side, and a test parses real responses with
 * them, so the document cannot drift from the server. Each one is checked
 * against the TypeScript type the core returns (`satisfies z.ZodType<T>`).
 * Objects are strict: a field the server adds without documenting it fails
 * that test. An `id` in the metadata names the schema in the document.
 */

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** An ISO 8601 UTC timestamp as every table and response stores it. */
export const timestamp = z
  .string()
  .refine((s) => ISO_UTC.test(s) && !Number.isNaN(Date.parse(s)), { message: "Expected an ISO 8601 UTC timestamp" })
  .meta({ format: "date-time", examples: ["2025-01-15T10:30:00.000Z"] });

export const integer = z.int();

export const eventNameSchema = z.enum(EVENT_NAMES).meta({ id: "EventName", description: "A webhook event name" });

export const agentSchema = z
  .strictObject({ id: integer, name: z.string(), slug: z.string() })
  .meta({ id: "Agent", description: "The chatbot (agent) a record belongs to" }) satisfies z.ZodType<AgentRef>;

export const sourceSchema = z
  .strictObject({
    name: z.string().meta({ description: "The document's name; for a correction its `source_name`, else its question" }),
    type: z.string().meta({ description: "`file`, `url` or `correction` (the reply is an answer correction's answer)" }),
    score: z.number().meta({ description: "Relevance in 0..1" }),
    id: integer.optional().meta({ description: "The correction's id, for `type` `correction`" }),
    url: z.string().optional().meta({ description: "Set for web pages (a clickable link when `type` is `url`), and for a correction given a `source_url`" }),
    title: z.string().optional().meta({ description: "A file's title (its first heading), when it has one other than its name" }),
  })
  .meta({ id: "Source", description: "A knowledge source a reply drew from, or the answer correction that gave the reply" }) satisfies z.ZodType<Source>;

export const messageSchema = z
  .strictObject({
    id: integer,
    role: z.enum(["user", "assistant", "agent"]).meta({ description: "`agent`: a person's reply, added by an operator" }),
    content: z.string().meta({
      description:
        "Plain text for `user` (escape it before rendering); sanitised HTML for `assistant`, with the branding element while it is required, and for `agent`, never branded (render both unmodified)",
    }),
    agent_name: z.string().nullable().optional().meta({ description: "Only on `agent` messages: the person's name, when the operator gave one" }),
    sources: z.array(sourceSchema),
    created_at: timestamp,
  })
  .meta({ id: "Message" }) satisfies z.ZodType<Message>;

export const ratedMessageSchema = messageSchema
  .extend({ rating: z.enum(["good", "bad"]).nullable().optional().meta({ description: "Only on `assistant` messages: the visitor's rating, null when not rated" }) })
  .meta({ id: "RatedMessage" }) satisfies z.ZodType<RatedMessage>;

export const eventActionSchema = z
  .strictObject({ type: z.literal("webhook"), event: eventNameSchema, deliveries: integer })
  .meta({ id: "EventAction", description: "What a change set in motion, e.g. webhook deliveries queued" }) satisfies z.ZodType<EventAction>;

export const pageMetaSchema = z
  .strictObject({
    current_page: integer,
    per_page: integer,
    total: integer,
    last_page: integer,
    from: integer.nullable().meta({ description: "1-based position of the page's first record; null on an empty page" }),
    to: integer.nullable(),
  })
  .meta({ id: "PageMeta" }) satisfies z.ZodType<PageMeta>;

export const pageLinksSchema = z
  .strictObject({ first: z.string(), last: z.string(), prev: z.string().nullable(), next: z.string().nullable() })
  .meta({ id: "PageLinks", description: "Other pages' path and query (absolute URLs when the server has a publicUrl), null where there is none" }) satisfies z.ZodType<PageLinks>;
