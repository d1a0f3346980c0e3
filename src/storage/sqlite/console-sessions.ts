import type { ConsoleSessionStore, ConsoleSessionUser } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";

/**
 * Console links and sessions. better-sqlite3 runs each method whole before any
 * other statement of this process, and each write is one statement, so processes
 * sharing the file agree on who used a link first.
 *
 * @example
 * const store = createConsoleSessionStore(sqlite);
 * const user = await store.consumeLoginToken(hash, now);
 */
export function createConsoleSessionStore(sqlite: Sqlite): ConsoleSessionStore {
  const insertToken = sqlite.prepare<[string, number, string, string]>(
    "INSERT INTO console_login_tokens (token_hash, user_id, expires_at, created_at) VALUES (?, ?, ?, ?)",
  );
  // An expired link is deleted too: it can never be used again.
  const takeToken = sqlite.prepare<[string], { user_id: number; expires_at: string }>(
    "DELETE FROM console_login_tokens WHERE token_hash = ? RETURNING user_id, expires_at",
  );
  const insertSession = sqlite.prepare<[string, number, string, string]>(
    "INSERT INTO console_sessions (session_hash, user_id, last_seen_at, created_at) VALUES (?, ?, ?, ?)",
  );
  const touchSession = sqlite.prepare<[string, string, string], { user_id: number }>(
    "UPDATE console_sessions SET last_seen_at = ? WHERE session_hash = ? AND last_seen_at > ? RETURNING user_id",
  );
  const deleteSession = sqlite.prepare<[string]>("DELETE FROM console_sessions WHERE session_hash = ?");
  const user = sqlite.prepare<[number], ConsoleSessionUser>("SELECT id AS user_id, organization_id, email FROM users WHERE id = ?");
  const pruneTokens = sqlite.prepare<[string]>("DELETE FROM console_login_tokens WHERE expires_at <= ?");
  const pruneSessions = sqlite.prepare<[string]>("DELETE FROM console_sessions WHERE last_seen_at <= ?");

  return {
    async createLoginToken(token) {
      insertToken.run(token.token_hash, token.user_id, token.expires_at, token.created_at);
    },
    async consumeLoginToken(tokenHash, now) {
      const row = takeToken.get(tokenHash);
      return row && row.expires_at > now ? user.get(row.user_id) : undefined;
    },
    async createSession(session) {
      insertSession.run(session.session_hash, session.user_id, session.created_at, session.created_at);
    },
    async resumeSession(sessionHash, now, idleSince) {
      const row = touchSession.get(now, sessionHash, idleSince);
      return row && user.get(row.user_id);
    },
    async deleteSession(sessionHash) {
      return deleteSession.run(sessionHash).changes > 0;
    },
    async prune(now, idleSince) {
      return sqlite.transaction(() => pruneTokens.run(now).changes + pruneSessions.run(idleSince).changes).immediate();
    },
  };
}
