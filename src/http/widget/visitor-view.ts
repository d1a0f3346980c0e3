import type { ChatReply, HumanHandledData, PendingReply, ReplyData } from "../../chat/chat.js";
import { ChatsvcError } from "../../core/errors.js";
import type { ErrorEnvelope } from "../envelope.js";

/** A reply as an anonymous visitor gets it through the widget. */
export type VisitorReply =
  | Pick<ReplyData, "reply" | "conversation_id" | "message_id" | "cannot_answer" | "sources">
  | Pick<HumanHandledData, "reply" | "handled_by" | "conversation_id" | "user_message_id">;

/**
 * The part of a reply the visitor needs. Credits, webhook actions, model and
 * timings are the organisation's business, and the widget surface is public.
 *
 * @example
 * ok(toVisitorReply((await pending.answer()).data))
 */
export function toVisitorReply(data: ReplyData | HumanHandledData): VisitorReply {
  if (data.reply === null) return { reply: null, handled_by: data.handled_by, conversation_id: data.conversation_id, user_message_id: data.user_message_id };
  const { reply, conversation_id, message_id, cannot_answer, sources } = data;
  return { reply, conversation_id, message_id, cannot_answer, sources };
}

/**
 * A pending reply whose answer is trimmed for a visitor, so the API's SSE
 * streamer can be reused as it is: its `done` event then carries the visitor
 * reply and an empty `meta`, and its `error` event no error details.
 */
export function forVisitor(pending: PendingReply): PendingReply {
  return {
    conversationId: pending.conversationId,
    handledBy: pending.handledBy,
    async answer(options) {
      try {
        const { data } = await pending.answer(options);
        return { data: toVisitorReply(data), meta: {} } as unknown as ChatReply;
      } catch (error) {
        throw ChatsvcError.isError(error) ? withoutDetails(error) : error;
      }
    },
  };
}

/** An error envelope without `details` (e.g. the organisation's credit figures on a credit 429). */
export function toVisitorError({ success, message, errors }: ErrorEnvelope): ErrorEnvelope {
  return { success, message, ...(errors && { errors }) };
}

function withoutDetails(error: ChatsvcError): ChatsvcError {
  return new ChatsvcError(error.status, error.message, { ...(error.errors && { errors: error.errors }), ...(error.headers && { headers: error.headers }), cause: error });
}
