import { createHmac, timingSafeEqual } from "node:crypto";
import { ChatsvcError } from "../../core/errors.js";
import type { ChatService } from "../../service.js";

/** What a visitor's token grants: one conversation of one chatbot, until `exp`. */
export interface WidgetTokenClaims {
  conversation_id: number;
  chatbot_id: number;
  /** Expiry, Unix seconds. */
  exp: number;
}

export interface WidgetTokens {
  /** A token for one conversation, valid for `ttlSeconds`. */
  issue(conversationId: number, chatbotId: number): { token: string; expires_at: string };
  /** The claims of a genuine, unexpired token; 401 otherwise. */
  verify(token: string | null | undefined): WidgetTokenClaims;
}

const VERSION = "v1";
const SECRET_KEY = "widget_secret";

/**
 * Signs and checks visitor tokens: `v1.<claims>.<signature>`, base64url JSON
 * claims and an HMAC-SHA256 over `v1.<claims>`. The visitor holds nothing
 * else, so a token is both the visitor's identity and their only permission.
 *
 * @example
 * const tokens = createWidgetTokens(await widgetSecret(service), { ttlSeconds: 3600 });
 * const { token } = tokens.issue(conversationId, chatbotId);
 * tokens.verify(token).conversation_id === conversationId; // true
 */
export function createWidgetTokens(secret: Buffer, { ttlSeconds, now = () => Date.now() }: { ttlSeconds: number; now?: () => number }): WidgetTokens {
  const sign = (body: string) => createHmac("sha256", secret).update(`${VERSION}.${body}`).digest();
  const invalid = () => ChatsvcError.unauthorized("Invalid widget token");

  return {
    issue(conversationId, chatbotId) {
      const exp = Math.floor(now() / 1000) + ttlSeconds;
      const claims: WidgetTokenClaims = { conversation_id: conversationId, chatbot_id: chatbotId, exp };
      const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
      return { token: `${VERSION}.${body}.${sign(body).toString("base64url")}`, expires_at: new Date(exp * 1000).toISOString() };
    },

    verify(token) {
      if (!token) throw ChatsvcError.unauthorized("Widget token is required");
      const [version, body, signature, ...rest] = token.split(".");
      if (version !== VERSION || !body || !signature || rest.length > 0 || token.length > 1024) throw invalid();
      // Compared as text: decoding is lenient (padding, `+` and `/`, ignored characters, unused low bits),
      // so several spellings would decode to the right digest and all be accepted.
      const expected = Buffer.from(sign(body).toString("base64url"));
      const given = Buffer.from(signature);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
      const claims = parseClaims(body);
      if (!claims) throw invalid();
      if (claims.exp * 1000 <= now()) throw ChatsvcError.unauthorized("Widget token has expired");
      return claims;
    },
  };
}

function parseClaims(body: string): WidgetTokenClaims | undefined {
  try {
    const value = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as Partial<WidgetTokenClaims>;
    const { conversation_id, chatbot_id, exp } = value;
    if (!Number.isSafeInteger(conversation_id) || !Number.isSafeInteger(chatbot_id) || !Number.isSafeInteger(exp)) return undefined;
    return { conversation_id: conversation_id!, chatbot_id: chatbot_id!, exp: exp! };
  } catch {
    return undefined;
  }
}

/** The install's token signing secret (the `widget_secret` setting), created on first use. */
export function widgetSecret(service: Pick<ChatService, "installSecret">): Promise<Buffer> {
  return service.installSecret(SECRET_KEY);
}
