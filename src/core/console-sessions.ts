import { createHash, randomBytes } from "node:crypto";
import type { ConsoleSessionStore, ConsoleSessionUser } from "./storage/index.js";
import { ChatsvcError } from "./errors.js";
import type { Keys } from "./keys.js";
import type { Users } from "./users.js";

/** How long a one-time console sign-in link works. */
export const CONSOLE_LINK_TTL_MS = 10 * 60_000;
/** A console session ends after this long without a request. */
export const CONSOLE_SESSION_IDLE_MS = 12 * 3_600_000;

/** Who is signed in to the console. */
export type ConsoleUser = ConsoleSessionUser;

/** A one-time sign-in link's secret, before it is put in a URL. */
export interface ConsoleLinkToken {
  token: string;
  expires_at: string;
  user: ConsoleUser;
}

/** A new session: `session` is the cookie's value, shown only now (the database keeps its SHA-256). */
export interface ConsoleSignIn {
  session: string;
  user: ConsoleUser;
}

export type ConsoleSessions = ReturnType<typeof createConsoleSessions>;

const hashOf = (secret: string) => createHash("sha256").update(secret).digest("hex");
// 32 random bytes: as strong as an API key, and URL-safe for the link.
const newSecret = () => randomBytes(32).toString("base64url");
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Sign-in to the operator console: one-time links (for `chatsvc console-link`) or an
 * API key, either exchanged for a session that ends after {@link CONSOLE_SESSION_IDLE_MS}
 * idle or at sign-out. Links and sessions are stored hashed and shared by every instance.
 *
 * @example
 * const { token } = await sessions.createLink("owner@example.com");
 * const { session, user } = await sessions.signInWithLink(token);
 * await sessions.resume(session); // the user, or a 401
 */
export function createConsoleSessions(store: ConsoleSessionStore, { users, keys }: { users: Users; keys: Keys }) {
  const start = async (user: ConsoleUser): Promise<ConsoleSignIn> => {
    const session = newSecret();
    const now = new Date();
    await store.createSession({ session_hash: hashOf(session), user_id: user.user_id, created_at: now.toISOString() });
    // Old rows go while someone signs in: rare enough to cost nothing, often enough to keep the tables small.
    await store.prune(now.toISOString(), new Date(now.getTime() - CONSOLE_SESSION_IDLE_MS).toISOString());
    return { session, user };
  };

  return {
    /** A one-time sign-in link's token for the user with this e-mail, valid {@link CONSOLE_LINK_TTL_MS}. */
    async createLink(email: string): Promise<ConsoleLinkToken> {
      const found = await users.getByEmail(email);
      const token = newSecret();
      const now = Date.now();
      const expiresAt = new Date(now + CONSOLE_LINK_TTL_MS).toISOString();
      await store.createLoginToken({ token_hash: hashOf(token), user_id: found.id, expires_at: expiresAt, created_at: new Date(now).toISOString() });
      return { token, expires_at: expiresAt, user: { user_id: found.id, organization_id: found.organization_id, email: found.email } };
    },

    /** Exchanges a link's token for a session; a token works once, and only before it expires (else 401). */
    async signInWithLink(token: string): Promise<ConsoleSignIn> {
      const user = SECRET_SHAPE.test(token) ? await store.consumeLoginToken(hashOf(token), new Date().toISOString()) : undefined;
      if (!user) throw ChatsvcError.unauthorized("This sign-in link is invalid, used or expired: ask for a new one");
      return start(user);
    },

    /** Exchanges an API key for a session of the key's owner; the key's own 401s otherwise. */
    async signInWithKey(apiKey: string): Promise<ConsoleSignIn> {
      const principal = await keys.verifyStored(apiKey);
      return start({ user_id: principal.userId, organization_id: principal.organizationId, email: principal.email });
    },

    /** The session's user, marking it used now; 401 when it is unknown, ended or idle too long. */
    async resume(session: string | undefined): Promise<ConsoleUser> {
      const now = Date.now();
      const user =
        session && SECRET_SHAPE.test(session)
          ? await store.resumeSession(hashOf(session), new Date(now).toISOString(), new Date(now - CONSOLE_SESSION_IDLE_MS).toISOString())
          : undefined;
      if (!user) throw ChatsvcError.unauthorized("Sign in to the console");
      return user;
    },

    /** Ends a session (nothing happens for one that already ended). */
    async signOut(session: string | undefined): Promise<void> {
      if (session && SECRET_SHAPE.test(session)) await store.deleteSession(hashOf(session));
    },
  };
}
