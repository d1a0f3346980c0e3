import type { ChatbotRecord, NewConversation, Storage } from "../../src/core/storage/index.js";

/** An organisation with `credits` a month and its `demo` chatbot, written straight through a storage. */
export async function seedTenant(storage: Pick<Storage, "orgs" | "chatbots">, { credits = 100, at = new Date().toISOString() } = {}) {
  const org = await storage.orgs.create({ name: "Acme", credits_monthly: credits, brand_removal: false, created_at: at });
  const bot = await storage.chatbots.create({
    organization_id: org.id,
    slug: "demo",
    name: "Demo",
    display_name: null,
    description: "",
    language: "en",
    is_active: true,
    greeting_message: "",
    fallback_message: "",
    placeholder_text: "",
    appearance: "{}",
    model: null,
    instructions: "",
    allowed_origins: "[]",
    created_at: at,
    updated_at: at,
  });
  if (typeof bot === "string") throw new Error(bot);
  return { org, bot };
}

/** A conversation of `bot` opened through the API at `at`, as the service asks a storage to start one; `values` override fields. */
export function newConversation(bot: ChatbotRecord, session_id: string, at: string, values: Partial<NewConversation> = {}): NewConversation {
  return {
    chatbot_id: bot.id,
    session_id,
    visitor_id: null,
    visitor_name: null,
    visitor_email: null,
    visitor_phone: null,
    metadata: "{}",
    source: "api",
    source_url: null,
    ip: null,
    country: null,
    started_at: at,
    last_message_at: at,
    ended_at: null,
    organization_id: bot.organization_id,
    agent_name: bot.name,
    agent_slug: bot.slug,
    ...values,
  };
}
