import { z } from "zod";
import type { CreditMeta, RateInput, ReplyData } from "../../chat/chat.js";
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
