import { z } from "zod";
import type { CreditMeta, HumanHandledData, RateInput, ReplyData } from "../../chat/chat.js";
import { eventActionSchema, integer, sourceSchema } from "./common.js";

export const replySchema = z
  .strictObject({
    reply: z.string().meta({ description: "Sanitised HTML (Markdown already converted) with the branding element while it is required: render it unmodified" }),
    conversation_id: integer,
    message_id: integer.meta({ description: "Id of the assistant message, for rating" }),
    cannot_answer: z.boolean().meta({ description: "True when the knowledge base had nothing relevant (the reply is the fallback message)" }),
    sources: z.array(sourceSchema),
    actions: z.array(eventActionSchema),
    model: z.string(),
    response_ms: integer,
  })
  .meta({ id: "Reply" }) satisfies z.ZodType<ReplyData>;

export const humanHandledSchema = z
  .strictObject({
    reply: z.null(),
    handled_by: z.literal("human"),
    conversation_id: integer,
    user_message_id: integer.meta({ description: "Id of the visitor's stored message" }),
    actions: z.array(eventActionSchema),
  })
  .meta({
    id: "HumanHandledReply",
    description: "A person handles the conversation: the message is stored, no model was called, nothing was charged; the person's reply arrives later as an `agent` message in history",
  }) satisfies z.ZodType<HumanHandledData>;

/** What sending a message answers: the bot's reply, or (while a person handles the conversation) no reply. */
export const sendReplySchema = z.union([replySchema, humanHandledSchema]);

export const creditMetaSchema = z
  .strictObject({
    credits_used: integer.meta({ description: "Credits the organisation used this month" }),
    credits_max: integer,
    credits_remaining: integer,
    this_message: integer.meta({ description: "Credits this message cost" }),
  })
  .meta({ id: "CreditMeta" }) satisfies z.ZodType<CreditMeta>;

export const ratingSchema = z
  .strictObject({ message_id: integer, rating: z.enum(["good", "bad"]) })
  .meta({ id: "Rating" }) satisfies z.ZodType<RateInput>;
