/** A stored chatbot; `appearance` and `allowed_origins` are JSON text, parsed by the domain. */
export interface ChatbotRecord {
  id: number;
  organization_id: number;
  slug: string;
  name: string;
  display_name: string | null;
  description: string;
  language: string;
  is_active: boolean;
  greeting_message: string;
  fallback_message: string;
  placeholder_text: string;
  appearance: string;
  model: string | null;
  instructions: string;
  allowed_origins: string;
  /** Whether visitors may ask for a person. */
  handoff_enabled: boolean;
  created_at: string;
  updated_at: string;
}

/** `handoff_enabled` defaults to off. */
export type NewChatbot = Omit<ChatbotRecord, "id" | "handoff_enabled"> & { handoff_enabled?: boolean };
export type ChatbotPatch = Partial<Omit<ChatbotRecord, "id" | "organization_id" | "slug" | "created_at">>;

/** Every column a {@link ChatbotPatch} may set: engines build one update statement that takes any patch. */
export const CHATBOT_PATCH_COLUMNS = [
  "name",
  "display_name",
  "description",
  "language",
  "is_active",
  "greeting_message",
  "fallback_message",
  "placeholder_text",
  "appearance",
  "model",
  "instructions",
  "allowed_origins",
  "handoff_enabled",
  "updated_at",
] as const satisfies readonly (keyof ChatbotPatch)[];

export interface ChatbotStore {
  /** One transaction: checks the organisation exists and the slug is free, then inserts. */
  create(bot: NewChatbot): Promise<ChatbotRecord | "no-organization" | "slug-taken">;
  /**
   * One transaction: reads the chatbot, computes the patch from it with
   * `patchOf` (synchronous, touches no storage), writes it. Undefined for an unknown slug.
   */
  update(slug: string, patchOf: (current: ChatbotRecord) => ChatbotPatch): Promise<ChatbotRecord | undefined>;
  /** Deletes the chatbot with its conversations, messages, leads and knowledge; false when unknown. */
  delete(slug: string): Promise<boolean>;
  /** The lookup every chatbot endpoint makes. */
  findBySlug(slug: string): Promise<ChatbotRecord | undefined>;
  find(id: number): Promise<ChatbotRecord | undefined>;
  /** Of one organisation, or all; oldest first. */
  list(organizationId?: number): Promise<ChatbotRecord[]>;
  /** Active chatbots of an organisation, oldest first. */
  listActive(organizationId: number): Promise<ChatbotRecord[]>;
}
