import type { ChatbotPatch, ChatbotRecord, ChatbotStore, NewChatbot } from "../../core/storage/index.js";
import { CHATBOT_PATCH_COLUMNS } from "../../core/storage/chatbots.js";
import type { Sqlite } from "./open.js";

type Row = Omit<ChatbotRecord, "is_active" | "handoff_enabled"> & { is_active: number; handoff_enabled: number };

const toRecord = (row: Row): ChatbotRecord => ({ ...row, is_active: row.is_active !== 0, handoff_enabled: row.handoff_enabled !== 0 });

export function createChatbotStore(sqlite: Sqlite): ChatbotStore {
  const bySlug = sqlite.prepare<[string], Row>("SELECT * FROM chatbots WHERE slug = ?");
  const byId = sqlite.prepare<[number], Row>("SELECT * FROM chatbots WHERE id = ?");
  const all = sqlite.prepare<[], Row>("SELECT * FROM chatbots ORDER BY id");
  const ofOrg = sqlite.prepare<[number], Row>("SELECT * FROM chatbots WHERE organization_id = ? ORDER BY id");
  const activeOfOrg = sqlite.prepare<[number], Row>("SELECT * FROM chatbots WHERE organization_id = ? AND is_active = 1 ORDER BY id");
  const orgExists = sqlite.prepare<[number], { x: number }>("SELECT 1 AS x FROM organizations WHERE id = ?");
  const insert = sqlite.prepare<Record<string, unknown>, Row>(
    `INSERT INTO chatbots (organization_id, slug, name, display_name, description, language, is_active, greeting_message, fallback_message,
       placeholder_text, appearance, model, instructions, allowed_origins, handoff_enabled, created_at, updated_at)
     VALUES (@organization_id, @slug, @name, @display_name, @description, @language, @is_active, @greeting_message, @fallback_message,
       @placeholder_text, @appearance, @model, @instructions, @allowed_origins, @handoff_enabled, @created_at, @updated_at) RETURNING *`,
  );
  const update = sqlite.prepare<Record<string, unknown>, Row>(
    `UPDATE chatbots SET ${CHATBOT_PATCH_COLUMNS.map((c) => `${c} = CASE WHEN @set_${c} THEN @${c} ELSE ${c} END`).join(", ")} WHERE id = @id RETURNING *`,
  );
  const remove = sqlite.prepare<[string]>("DELETE FROM chatbots WHERE slug = ?");

  const create = sqlite.transaction((bot: NewChatbot): ChatbotRecord | "no-organization" | "slug-taken" => {
    if (!orgExists.get(bot.organization_id)) return "no-organization";
    if (bySlug.get(bot.slug)) return "slug-taken";
    return toRecord(insert.get({ ...bot, is_active: bot.is_active ? 1 : 0, handoff_enabled: bot.handoff_enabled ? 1 : 0 })!);
  });

  const patch = sqlite.transaction((slug: string, patchOf: (current: ChatbotRecord) => ChatbotPatch): ChatbotRecord | undefined => {
    const row = bySlug.get(slug);
    if (!row) return undefined;
    const changes = patchOf(toRecord(row));
    const params: Record<string, unknown> = { id: row.id };
    for (const column of CHATBOT_PATCH_COLUMNS) {
      const value = changes[column];
      params[`set_${column}`] = value === undefined ? 0 : 1;
      params[column] = value === undefined ? null : typeof value === "boolean" ? (value ? 1 : 0) : value;
    }
    return toRecord(update.get(params)!);
  });

  return {
    async create(bot) {
      return create.immediate(bot);
    },
    async update(slug, patchOf) {
      return patch.immediate(slug, patchOf);
    },
    async delete(slug) {
      return remove.run(slug).changes > 0;
    },
    async findBySlug(slug) {
      const row = bySlug.get(slug);
      return row && toRecord(row);
    },
    async find(id) {
      const row = byId.get(id);
      return row && toRecord(row);
    },
    async list(organizationId) {
      return (organizationId === undefined ? all.all() : ofOrg.all(organizationId)).map(toRecord);
    },
    async listActive(organizationId) {
      return activeOfOrg.all(organizationId).map(toRecord);
    },
  };
}
