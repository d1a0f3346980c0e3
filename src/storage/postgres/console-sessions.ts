import type pg from "pg";
import type { ConsoleSessionStore, ConsoleSessionUser } from "../../core/storage/index.js";
import { one, run, statement } from "./client.js";

const insertToken = statement(
  "console_token_insert",
  "INSERT INTO console_login_tokens (token_hash, user_id, expires_at, created_at) VALUES ($1, $2, $3, $4)",
);
// One statement: of two instances racing with the same link, only one deletes the row. An expired link goes too.
const takeToken = statement(
  "console_token_take",
  `WITH taken AS (DELETE FROM console_login_tokens WHERE token_hash = $1 RETURNING user_id, expires_at)
   SELECT u.id AS user_id, u.organization_id, u.email, taken.expires_at FROM taken JOIN users u ON u.id = taken.user_id`,
);
const insertSession = statement(
  "console_session_insert",
  "INSERT INTO console_sessions (session_hash, user_id, last_seen_at, created_at) VALUES ($1, $2, $3, $3)",
);
const resumeSession = statement(
  "console_session_resume",
  `WITH seen AS (UPDATE console_sessions SET last_seen_at = $1 WHERE session_hash = $2 AND last_seen_at > $3 RETURNING user_id)
   SELECT u.id AS user_id, u.organization_id, u.email FROM seen JOIN users u ON u.id = seen.user_id`,
);
const deleteSession = statement("console_session_delete", "DELETE FROM console_sessions WHERE session_hash = $1");
const pruneTokens = statement("console_token_prune", "DELETE FROM console_login_tokens WHERE expires_at <= $1");
const pruneSessions = statement("console_session_prune", "DELETE FROM console_sessions WHERE last_seen_at <= $1");

/**
 * Console links and sessions on PostgreSQL; each method is one statement.
 *
 * @example
 * const store = createPgConsoleSessionStore(pool);
 */
export function createPgConsoleSessionStore(pool: pg.Pool): ConsoleSessionStore {
  return {
    async createLoginToken(token) {
      await run(pool, insertToken, [token.token_hash, token.user_id, token.expires_at, token.created_at]);
    },
    async consumeLoginToken(tokenHash, now) {
      const row = await one<ConsoleSessionUser & { expires_at: string }>(pool, takeToken, [tokenHash]);
      if (!row || row.expires_at <= now) return undefined;
      return { user_id: row.user_id, organization_id: row.organization_id, email: row.email };
    },
    async createSession(session) {
      await run(pool, insertSession, [session.session_hash, session.user_id, session.created_at]);
    },
    resumeSession: (sessionHash, now, idleSince) => one<ConsoleSessionUser>(pool, resumeSession, [now, sessionHash, idleSince]),
    async deleteSession(sessionHash) {
      return (await run(pool, deleteSession, [sessionHash])) > 0;
    },
    async prune(now, idleSince) {
      return (await run(pool, pruneTokens, [now])) + (await run(pool, pruneSessions, [idleSince]));
    },
  };
}
