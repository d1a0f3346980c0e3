import { z } from "zod";
import type { Branding } from "./branding.js";
import { nowIso } from "./clock.js";
import type { ChangeFeed, ChatbotPatch, ChatbotRecord, ChatbotStore } from "./storage/index.js";
import { ChatsvcError } from "./errors.js";
import { id, oneOf, parse, text } from "./validation.js";

export interface Appearance {
  primary_color: string;
  bubble_color: string;
  widget_theme: "light" | "dark";
  profile_image: string;
  chat_icon: string | null;
  bubble_message: string;
  show_bubble_message: boolean;
}

/** A chatbot as `GET /chatbots` lists it. */
export interface ChatbotListItem {
  id: number;
  slug: string;
  name: string;
  description: string;
  language: string;
  is_active: boolean;
  created_at: string;
}

/** A chatbot's configuration as `GET /chatbots/{slug}` returns it. */
export interface ChatbotDetail extends ChatbotListItem {
  display_name: string;
  greeting_message: string;
  fallback_message: string;
  placeholder_text: string;
  has_knowledge_base: boolean;
  appearance: Appearance;
  branding: Branding;
  /** Whether visitors may ask for a person (the widget shows a button for it). */
  handoff_enabled: boolean;
}

/** Everything stored about a chatbot, for owners (CLI, library). */
export interface Chatbot extends ChatbotListItem {
  organization_id: number;
  display_name: string;
  greeting_message: string;
  fallback_message: string;
  placeholder_text: string;
  appearance: Appearance;
  /** Model spec overriding the service default, or null. */
  model: string | null;
  instructions: string;
  allowed_origins: string[];
  /** Whether visitors may ask for a person (the widget shows a button for it). */
  handoff_enabled: boolean;
  updated_at: string;
}

export const DEFAULT_APPEARANCE: Appearance = {
  primary_color: "#2563eb",
  bubble_color: "#2563eb",
  widget_theme: "light",
  profile_image:
    "data:image/svg+xml;base64," +
    Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40"><circle cx="20" cy="20" r="20" fill="#2563eb"/><circle cx="14" cy="17" r="3" fill="#fff"/><circle cx="26" cy="17" r="3" fill="#fff"/><path d="M12 25q8 7 16 0" stroke="#fff" stroke-width="2.5" fill="none" stroke-linecap="round"/></svg>',
    ).toString("base64"),
  chat_icon: null,
  bubble_message: "Questions? Ask me!",
  show_bubble_message: true,
};

export const DEFAULT_MESSAGES = {
  greeting_message: "Hi! How can I help you today?",
  fallback_message: "Sorry, I don't have information about that. Could you rephrase your question, or leave your contact details so someone can get back to you?",
  placeholder_text: "Type your message…",
};

const hex = (field: string) =>
  z.string({ error: `The ${field.replace(/_/g, " ")} field must be a string.` }).regex(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, {
    message: `The ${field.replace(/_/g, " ")} field must be a hex colour such as #2563eb.`,
  });
const urlish = (field: string) =>
  text(field, { max: 100_000 }).refine((s) => /^(https?:\/\/|data:image\/)/i.test(s) && URL.canParse(s), {
    message: `The ${field.replace(/_/g, " ")} field must be an http(s) or data:image URL.`,
  });
const origin = z.string().refine(
  (s) => {
    if (!URL.canParse(s)) return false;
    const u = new URL(s);
    return (u.protocol === "http:" || u.protocol === "https:") && u.origin === s.replace(/\/$/, "");
  },
  { message: "Each allowed origin must be a scheme and host, such as https://example.com." },
);

const appearanceSchema = z
  .object({
    primary_color: hex("primary_color"),
    bubble_color: hex("bubble_color"),
    widget_theme: oneOf("widget_theme", ["light", "dark"]),
    profile_image: urlish("profile_image"),
    chat_icon: urlish("chat_icon").nullable(),
    bubble_message: text("bubble_message", { max: 200 }),
    show_bubble_message: z.boolean({ error: "The show bubble message field must be a boolean." }),
  })
  .partial();

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

const configShape = {
  name: text("name", { min: 1, max: 200 }),
  display_name: text("display_name", { max: 200 }).nullable(),
  description: text("description", { max: 2000 }),
  language: text("language", { max: 35 }).refine((s) => /^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/.test(s), {
    message: "The language field must be a language code such as en or pt-BR.",
  }),
  is_active: z.boolean({ error: "The is active field must be a boolean." }),
  greeting_message: text("greeting_message", { max: 2000 }),
  fallback_message: text("fallback_message", { max: 2000 }),
  placeholder_text: text("placeholder_text", { max: 200 }),
  appearance: appearanceSchema,
  model: text("model", { max: 200 })
    .refine((s) => /^(extractive|(ollama|openai):\S+)$/.test(s), { message: "The model field must be extractive, ollama:<model> or openai:<model>." })
    .nullable(),
  instructions: text("instructions", { max: 20_000 }),
  allowed_origins: z.array(origin, { error: "The allowed origins field must be a list of origins." }).max(50),
  handoff_enabled: z.boolean({ error: "The handoff enabled field must be a boolean." }),
};

const createSchema = z.object({
  organization_id: id("organization_id"),
  slug: text("slug", { min: 1, max: 64 }).refine((s) => SLUG.test(s), {
    message: "The slug may contain lowercase letters, digits and dashes, and must start and end with a letter or digit.",
  }),
  ...configShape,
  description: configShape.description.optional(),
  language: configShape.language.optional(),
  display_name: configShape.display_name.optional(),
  is_active: configShape.is_active.optional(),
  greeting_message: configShape.greeting_message.optional(),
  fallback_message: configShape.fallback_message.optional(),
  placeholder_text: configShape.placeholder_text.optional(),
  appearance: appearanceSchema.optional(),
  model: configShape.model.optional(),
  instructions: configShape.instructions.optional(),
  allowed_origins: configShape.allowed_origins.optional(),
  handoff_enabled: configShape.handoff_enabled.optional(),
});

const updateSchema = z.object(configShape).partial();

export type CreateChatbotInput = z.input<typeof createSchema>;
export type UpdateChatbotInput = z.input<typeof updateSchema>;

/** Parses the JSON columns, tolerating (and repairing on read) anything that is not the shape we write. */
function toChatbot(row: ChatbotRecord): Chatbot {
  const appearance = { ...DEFAULT_APPEARANCE, ...safeJson<Partial<Appearance>>(row.appearance, {}) };
  return {
    id: row.id,
    organization_id: row.organization_id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    language: row.language,
    is_active: row.is_active,
    created_at: row.created_at,
    updated_at: row.updated_at,
    display_name: row.display_name ?? row.name,
    greeting_message: row.greeting_message,
    fallback_message: row.fallback_message,
    placeholder_text: row.placeholder_text,
    appearance,
    model: row.model,
    instructions: row.instructions,
    allowed_origins: safeJson<string[]>(row.allowed_origins, []),
    handoff_enabled: row.handoff_enabled,
  };
}

function safeJson<T>(raw: string, fallback: T): T {
  try {
    return JSON.parse(raw) as T;
  } catch {
    return fallback;
  }
}

export function toListItem(bot: Chatbot): ChatbotListItem {
  return {
    id: bot.id,
    slug: bot.slug,
    name: bot.name,
    description: bot.description,
    language: bot.language,
    is_active: bot.is_active,
    created_at: bot.created_at,
  };
}

export type Chatbots = ReturnType<typeof createChatbots>;

export interface ChatbotsDeps {
  /** Whether the chatbot has knowledge chunks (owned by the knowledge store). */
  hasKnowledge(chatbotId: number): Promise<boolean>;
  branding(organizationId: number): Promise<Branding>;
  /** Writes to chatbots made elsewhere (another process or instance), for the chatbots remembered by slug. */
  changes: ChangeFeed;
}

/** Most chatbots remembered by slug; past it the cache starts over. */
const MAX_REMEMBERED = 1_000;

/**
 * Chatbots by slug, so a chat request (which resolves one) needs no query.
 * Writes through this service clear it; writes made elsewhere (the CLI in
 * another process, another instance, SQL) move the storage's `chatbots`
 * change version, read on every lookup: exact on SQLite, polled on
 * PostgreSQL (there another instance's change applies within a poll, a
 * quarter of a second). Only chatbots found are remembered, frozen: every
 * caller shares them.
 */
function createChatbotCache(store: ChatbotStore, changes: ChangeFeed) {
  const entries = new Map<string, Chatbot>();
  let seen: number | undefined;
  // Moves whenever the entries are dropped: a lookup that began before must not put back what it read.
  let generation = 0;
  const forget = () => {
    entries.clear();
    generation++;
  };
  const followChanges = () => {
    const version = changes.version("chatbots");
    if (version !== seen) {
      seen = version;
      forget();
    }
  };
  return {
    async find(slug: string): Promise<Chatbot | undefined> {
      followChanges();
      const hit = entries.get(slug);
      if (hit) return hit;
      const started = generation;
      const row = await store.findBySlug(slug);
      if (!row) return undefined;
      const bot = frozen(toChatbot(row));
      followChanges();
      if (started === generation) {
        if (entries.size >= MAX_REMEMBERED) forget();
        entries.set(slug, bot);
      }
      return bot;
    },
    /** Runs a write to chatbots, then forgets what it may have outdated. */
    async writing<T>(write: () => Promise<T>): Promise<T> {
      try {
        return await write();
      } finally {
        forget();
      }
    },
  };
}

function frozen(bot: Chatbot): Chatbot {
  Object.freeze(bot.appearance);
  Object.freeze(bot.allowed_origins);
  return Object.freeze(bot);
}

export function createChatbots(store: ChatbotStore, deps: ChatbotsDeps) {
  const cache = createChatbotCache(store, deps.changes);
  const find = cache.find;

  const detail = async (bot: Chatbot): Promise<ChatbotDetail> => {
    const [hasKnowledge, branding] = await Promise.all([deps.hasKnowledge(bot.id), deps.branding(bot.organization_id)]);
    return {
      ...toListItem(bot),
      display_name: bot.display_name,
      greeting_message: bot.greeting_message,
      fallback_message: bot.fallback_message,
      placeholder_text: bot.placeholder_text,
      has_knowledge_base: hasKnowledge,
      appearance: bot.appearance,
      branding,
      handoff_enabled: bot.handoff_enabled,
    };
  };

  /**
   * The chatbot a caller of the given organisation addresses by slug. Unknown
   * slugs and other organisations' slugs are the same 403, so slugs of other
   * tenants cannot be probed.
   */
  const resolve = async (organizationId: number, slug: string): Promise<Chatbot> => {
    const bot = await find(slug);
    if (!bot || bot.organization_id !== organizationId) throw ChatsvcError.forbidden("Chatbot not found or access denied");
    return bot;
  };

  return {
    async create(input: CreateChatbotInput): Promise<Chatbot> {
      const data = parse(createSchema, input);
      const now = nowIso();
      const created = await store.create({
        organization_id: data.organization_id,
        slug: data.slug,
        name: data.name.trim(),
        display_name: data.display_name ?? null,
        description: data.description ?? "",
        language: data.language ?? "en",
        is_active: data.is_active ?? true,
        greeting_message: data.greeting_message ?? DEFAULT_MESSAGES.greeting_message,
        fallback_message: data.fallback_message ?? DEFAULT_MESSAGES.fallback_message,
        placeholder_text: data.placeholder_text ?? DEFAULT_MESSAGES.placeholder_text,
        appearance: JSON.stringify({ ...DEFAULT_APPEARANCE, ...data.appearance }),
        model: data.model ?? null,
        instructions: data.instructions ?? "",
        allowed_origins: JSON.stringify(data.allowed_origins ?? []),
        handoff_enabled: data.handoff_enabled ?? false,
        created_at: now,
        updated_at: now,
      });
      if (created === "no-organization") throw ChatsvcError.notFound(`Organization ${data.organization_id} not found`);
      if (created === "slug-taken") throw ChatsvcError.validation({ slug: ["The slug has already been taken."] });
      return toChatbot(created);
    },

    async update(slug: string, input: UpdateChatbotInput): Promise<Chatbot> {
      const data = parse(updateSchema, input);
      const updatedAt = nowIso();
      const row = await cache.writing(() => store.update(slug, (current) => {
        const patch: ChatbotPatch = { updated_at: updatedAt };
        if (data.name !== undefined) patch.name = data.name.trim();
        if (data.display_name !== undefined) patch.display_name = data.display_name;
        if (data.description !== undefined) patch.description = data.description;
        if (data.language !== undefined) patch.language = data.language;
        if (data.is_active !== undefined) patch.is_active = data.is_active;
        if (data.greeting_message !== undefined) patch.greeting_message = data.greeting_message;
        if (data.fallback_message !== undefined) patch.fallback_message = data.fallback_message;
        if (data.placeholder_text !== undefined) patch.placeholder_text = data.placeholder_text;
        if (data.appearance !== undefined) patch.appearance = JSON.stringify({ ...toChatbot(current).appearance, ...data.appearance });
        if (data.model !== undefined) patch.model = data.model;
        if (data.instructions !== undefined) patch.instructions = data.instructions;
        if (data.handoff_enabled !== undefined) patch.handoff_enabled = data.handoff_enabled;
        if (data.allowed_origins !== undefined) patch.allowed_origins = JSON.stringify(data.allowed_origins.map((o) => o.replace(/\/$/, "")));
        return patch;
      }));
      if (!row) throw ChatsvcError.notFound(`Chatbot ${slug} not found`);
      return toChatbot(row);
    },

    /** Deletes a chatbot with its conversations, leads and knowledge. */
    async delete(slug: string): Promise<void> {
      if (!(await cache.writing(() => store.delete(slug)))) throw ChatsvcError.notFound(`Chatbot ${slug} not found`);
    },

    find,

    async get(slug: string): Promise<Chatbot> {
      const bot = await find(slug);
      if (!bot) throw ChatsvcError.notFound(`Chatbot ${slug} not found`);
      return bot;
    },

    async list(organizationId?: number): Promise<Chatbot[]> {
      return (await store.list(organizationId)).map(toChatbot);
    },

    /** Active chatbots of an organisation, as `GET /chatbots` lists them. */
    async listActive(organizationId: number): Promise<ChatbotListItem[]> {
      return (await store.listActive(organizationId)).map((row) => toListItem(toChatbot(row)));
    },

    resolve,

    /** Like {@link resolve}, and refuses an inactive chatbot (403). */
    async resolveActive(organizationId: number, slug: string): Promise<Chatbot> {
      const bot = await resolve(organizationId, slug);
      if (!bot.is_active) throw ChatsvcError.forbidden("Chatbot is not active");
      return bot;
    },

    detail,
  };
}
