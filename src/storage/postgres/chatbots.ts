import type pg from "pg";
import { CHATBOT_PATCH_COLUMNS } from "../../core/storage/chatbots.js";
import type { ChatbotPatch, ChatbotRecord, ChatbotStore } from "../../core/storage/index.js";
import { all, isUniqueViolation, one, run, sqlState, statement, transaction } from "./client.js";
import { bumpRevision } from "./revisions.js";

const COLUMNS = `id, organization_id, slug, name, display_name, description, language, is_active, greeting_message,
  fallback_message, placeholder_text, appearance, model, instructions, allowed_origins, handoff_enabled, created_at, updated_at`;

const insert = statement(
  "chatbots_insert",
  `INSERT INTO chatbots (organization_id, slug, name, display_name, description, language, is_active, greeting_message,
     fallback_message, placeholder_text, appearance, model, instructions, allowed_origins, handoff_enabled, created_at, updated_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING ${COLUMNS}`,
);
const bySlug = statement("chatbots_by_slug", `SELECT ${COLUMNS} FROM chatbots WHERE slug = $1`);
const bySlugForUpdate = statement("chatbots_by_slug_for_update", `SELECT ${COLUMNS} FROM chatbots WHERE slug = $1 FOR UPDATE`);
const byId = statement("chatbots_by_id", `SELECT ${COLUMNS} FROM chatbots WHERE id = $1`);
const list = statement("chatbots_list", `SELECT ${COLUMNS} FROM chatbots WHERE $1::int IS NULL OR organization_id = $1 ORDER BY id`);
const listActive = statement("chatbots_list_active", `SELECT ${COLUMNS} FROM chatbots WHERE organization_id = $1 AND is_active ORDER BY id`);
// A column not in the patch keeps its value: `$n IS NULL` cannot tell "absent" from "set to null"
// (display_name, model), so each column gets a flag saying whether the patch sets it.
const BOOLEAN_COLUMNS = new Set<string>(["is_active", "handoff_enabled"]);
const update = statement(
  "chatbots_update",
  `UPDATE chatbots SET ${CHATBOT_PATCH_COLUMNS.map((c, i) => `${c} = CASE WHEN $${2 * i + 2}::boolean THEN $${2 * i + 3}::${BOOLEAN_COLUMNS.has(c) ? "boolean" : "text"} ELSE ${c} END`).join(", ")}
    WHERE id = $1 RETURNING ${COLUMNS}`,
);
const remove = statement("chatbots_delete", "DELETE FROM chatbots WHERE slug = $1");

export function createPgChatbotStore(pool: pg.Pool): ChatbotStore {
  return {
    async create(bot) {
      try {
        return (await one<ChatbotRecord>(pool, insert, [
          bot.organization_id,
          bot.slug,
          bot.name,
          bot.display_name,
          bot.description,
          bot.language,
          bot.is_active,
          bot.greeting_message,
          bot.fallback_message,
          bot.placeholder_text,
          bot.appearance,
          bot.model,
          bot.instructions,
          bot.allowed_origins,
          bot.handoff_enabled ?? false,
          bot.created_at,
          bot.updated_at,
        ]))!;
      } catch (error) {
        if (sqlState(error) === "23503") return "no-organization";
        if (isUniqueViolation(error, "chatbots_slug_unique")) return "slug-taken";
        throw error;
      }
    },

    update: (slug, patchOf) =>
      transaction(pool, async (tx) => {
        const current = await one<ChatbotRecord>(tx, bySlugForUpdate, [slug]);
        if (!current) return undefined;
        const patch = patchOf(current);
        const values: unknown[] = [current.id];
        for (const column of CHATBOT_PATCH_COLUMNS) values.push(column in patch && patch[column] !== undefined, patch[column] ?? null);
        return one<ChatbotRecord>(tx, update, values);
      }),

    delete: (slug) =>
      transaction(pool, async (tx) => {
        const deleted = (await run(tx, remove, [slug])) > 0;
        if (deleted) await bumpRevision(tx, "knowledge");
        return deleted;
      }),

    findBySlug: (slug) => one<ChatbotRecord>(pool, bySlug, [slug]),
    find: (id) => one<ChatbotRecord>(pool, byId, [id]),
    list: (organizationId) => all<ChatbotRecord>(pool, list, [organizationId ?? null]),
    listActive: (organizationId) => all<ChatbotRecord>(pool, listActive, [organizationId]),
  };
}
