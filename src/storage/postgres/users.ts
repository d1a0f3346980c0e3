import type pg from "pg";
import type { UserRecord, UserStore } from "../../core/storage/index.js";
import { all, isUniqueViolation, one, sqlState, statement } from "./client.js";

const COLUMNS = "id, organization_id, email, name, created_at";
const insert = statement("users_insert", `INSERT INTO users (organization_id, email, name, created_at) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`);
const list = statement("users_list", `SELECT ${COLUMNS} FROM users WHERE $1::int IS NULL OR organization_id = $1 ORDER BY id`);
const byId = statement("users_by_id", `SELECT ${COLUMNS} FROM users WHERE id = $1`);
const byEmail = statement("users_by_email", `SELECT ${COLUMNS} FROM users WHERE email = $1`);

export function createPgUserStore(pool: pg.Pool): UserStore {
  return {
    // One statement: the foreign key checks the organisation and the unique index the e-mail, atomically.
    async create(user) {
      try {
        return (await one<UserRecord>(pool, insert, [user.organization_id, user.email, user.name, user.created_at]))!;
      } catch (error) {
        if (sqlState(error) === "23503") return "no-organization";
        if (isUniqueViolation(error, "users_email_unique")) return "email-taken";
        throw error;
      }
    },
    list: (organizationId) => all<UserRecord>(pool, list, [organizationId ?? null]),
    find: (id) => one<UserRecord>(pool, byId, [id]),
    findByEmail: (email) => one<UserRecord>(pool, byEmail, [email]),
  };
}
