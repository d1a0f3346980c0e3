import type { H3Event } from "h3";
import type { Chatbot } from "../../core/chatbots.js";
import { ChatsvcError } from "../../core/errors.js";
import { clientIp } from "../client-ip.js";
import type { ChatService } from "../../service.js";
import { allowOrigin, mayUseWidget, requestOrigin, WIDGET_TOKEN_HEADER, widgetRefused, type RequestOrigin, type SameOriginPolicy } from "./cors.js";
import { createBucketLimiter, type RateDecision } from "../../net/token-buckets.js";
import type { WidgetTokens } from "./token.js";

/** A widget request that passed the chatbot's origin policy and the per-IP limit. */
export interface Admitted {
  bot: Chatbot;
  origin: RequestOrigin;
}

export interface WidgetGuard {
  /** The chatbot of `slug` and the request's origin, or 403. Sets the CORS answer. */
  admitOrigin(event: H3Event, slug: string): Promise<Admitted>;
  /** {@link admitOrigin}, then the per-IP rate limit (429). */
  admit(event: H3Event, slug: string): Promise<Admitted>;
  /**
   * The visitor's conversation: the token must be genuine (401) and name this
   * chatbot and this conversation (404, as for a conversation that does not
   * exist, so a token reveals nothing about other conversations); then the
   * per-visitor rate limit (429).
   */
  conversation(event: H3Event, admitted: Admitted, conversationId: number): Promise<number>;
}

/**
 * The access rules of the public widget surface, which has no API key:
 * no browser origin 403; unknown or inactive chatbot and origin not allowed
 * the same 403 (so slugs cannot be probed); too many requests
 * from one IP or for one conversation 429 with `Retry-After`.
 *
 * @example
 * const guard = createWidgetGuard(service, tokens, { sameOrigin: sameOriginPolicy(["demo"], ["http://127.0.0.1:3000"]) });
 * const { bot } = await guard.admit(event, "demo");
 */
export function createWidgetGuard(service: ChatService, tokens: () => Promise<WidgetTokens>, { sameOrigin }: { sameOrigin: SameOriginPolicy }): WidgetGuard {
  const { ipRatePerMinute, visitorRatePerMinute } = service.config.widget;
  const perIp = createBucketLimiter("widget-ip", { capacity: ipRatePerMinute, refillPerSecond: ipRatePerMinute / 60 }, service.sharedRateLimits);
  const perVisitor = createBucketLimiter("widget-conversation", { capacity: visitorRatePerMinute, refillPerSecond: visitorRatePerMinute / 60 }, service.sharedRateLimits);

  const admitOrigin = async (event: H3Event, slug: string): Promise<Admitted> => {
    const origin = requestOrigin(event, sameOrigin);
    const bot = await service.chatbots.find(slug);
    if (!bot || !bot.is_active || !mayUseWidget(bot, origin, sameOrigin.slugs)) throw widgetRefused();
    allowOrigin(event, origin);
    return { bot, origin };
  };

  return {
    admitOrigin,

    async admit(event, slug) {
      const admitted = await admitOrigin(event, slug);
      const ip = clientIp(event, service.config) ?? "unknown";
      refuseWhenSpent(await perIp.take(`ip:${ip}`));
      return admitted;
    },

    async conversation(event, { bot }, conversationId) {
      const claims = (await tokens()).verify(event.req.headers.get(WIDGET_TOKEN_HEADER));
      if (claims.chatbot_id !== bot.id || claims.conversation_id !== conversationId) throw ChatsvcError.notFound("Conversation not found");
      refuseWhenSpent(await perVisitor.take(`conversation:${conversationId}`));
      return conversationId;
    },
  };
}

function refuseWhenSpent(decision: RateDecision): void {
  if (decision.ok) return;
  throw new ChatsvcError(429, `Too many requests; try again in ${decision.retryAfterSeconds} s`, {
    headers: { "retry-after": String(decision.retryAfterSeconds) },
  });
}
