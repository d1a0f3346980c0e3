import type { PendingReply } from "../chat/chat.js";
import type { IdempotentStart } from "../core/idempotency.js";
import { ok } from "./envelope.js";
import type { RouteContext, RouteDefinition } from "./router.js";

/**
 * Runs a route that creates or charges under the request's `Idempotency-Key`
 * (when it sends one): a retry with the same key and body gets the stored
 * status and body with `Idempotency-Replayed: true`; see `service.idempotency`
 * for 409 and 422. Only successful answers are stored: an error frees the key.
 * A streamed send stores the JSON envelope of its `done` event, so its replay
 * is that JSON envelope, not a stream.
 *
 * @example
 * const answer = await runIdempotently(ctx, route.handler);
 */
export async function runIdempotently(ctx: RouteContext, handler: RouteDefinition["handler"]): Promise<unknown> {
  const key = ctx.event.req.headers.get("idempotency-key");
  if (key === null) return handler(ctx);
  const body = await ctx.body();
  const request = { method: ctx.event.req.method, path: ctx.event.url.pathname, body: body === undefined ? "" : JSON.stringify(body) };
  const start = await ctx.service.idempotency.begin(ctx.principal.organizationId, key, request);
  if (start.replay) {
    ctx.event.res.status = start.replay.status;
    ctx.event.res.headers.set("idempotency-replayed", "true");
    return JSON.parse(start.replay.body) as unknown;
  }
  let streamed = false;
  const idempotentReply = (pending: PendingReply): PendingReply => {
    streamed = true;
    return storingReply(pending, start);
  };
  try {
    const result = await handler({ ...ctx, idempotentReply });
    if (!streamed) await start.complete({ status: ctx.event.res.status ?? 200, body: JSON.stringify(result) });
    return result;
  } catch (error) {
    await start.release();
    throw error;
  }
}

/** A streamed reply that stores its envelope under the key once answered, or frees the key when it fails. */
function storingReply(pending: PendingReply, start: Exclude<IdempotentStart, { replay: object }>): PendingReply {
  return {
    conversationId: pending.conversationId,
    handledBy: pending.handledBy,
    async answer(options) {
      try {
        const reply = await pending.answer(options);
        await start.complete({ status: 200, body: JSON.stringify(ok(reply.data, { meta: { ...reply.meta } })) });
        return reply;
      } catch (error) {
        await start.release();
        throw error;
      }
    },
  };
}
