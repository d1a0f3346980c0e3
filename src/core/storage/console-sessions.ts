/** Who a console session or sign-in link belongs to. */
export interface ConsoleSessionUser {
  user_id: number;
  organization_id: number;
  email: string;
}

/**
 * Console sign-in links and sessions, stored by the SHA-256 of their secrets only,
 * so a copy of the database signs nobody in. Every instance on the database shares them.
 */
export interface ConsoleSessionStore {
  /** Stores a one-time sign-in link's token hash for a user. */
  createLoginToken(token: { token_hash: string; user_id: number; expires_at: string; created_at: string }): Promise<void>;
  /**
   * Takes a link's token: one statement deletes it and answers its user when it had not
   * expired at `now`, so two requests racing with one link cannot both get a session.
   */
  consumeLoginToken(tokenHash: string, now: string): Promise<ConsoleSessionUser | undefined>;
  createSession(session: { session_hash: string; user_id: number; created_at: string }): Promise<void>;
  /**
   * The session's user when it was last seen after `idleSince`, recording `now` as its last use;
   * undefined when it is unknown, ended or idle too long.
   */
  resumeSession(sessionHash: string, now: string, idleSince: string): Promise<ConsoleSessionUser | undefined>;
  /** Ends a session; false when there was none. */
  deleteSession(sessionHash: string): Promise<boolean>;
  /** Removes expired links and sessions idle since before `idleSince`; answers how many rows went. */
  prune(now: string, idleSince: string): Promise<number>;
}
