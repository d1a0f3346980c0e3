import { z } from "zod";
import type { Chatbots } from "./chatbots.js";
import { nowIso } from "./clock.js";
import { agentOf, listFilters, type Conversations } from "./conversations.js";
import { ChatsvcError } from "./errors.js";
import type { EventBus, LeadPayload } from "./events.js";
import type { Message, Messages } from "./messages.js";
import { DEFAULT_PER_PAGE, pageMeta, pageQueryShape, type Page, type PageQuery } from "./pagination.js";
import type { LeadRecord, LeadStore } from "./storage/index.js";
import { body, email, parse, text } from "./validation.js";

export interface LeadInput {
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  message?: string | null;
}

export interface LeadUpdateInput extends LeadInput {
  company?: string | null;
}

/** `POST /chatbots/{slug}/conversations/{id}/leads` data. */
export interface CapturedLead {
  lead_id: number;
  conversation_id: number;
  name: string | null;
  email: string | null;
  phone: string | null;
}

/** A lead as the account-level endpoints show it: the webhook shape plus `updated_at`. */
export interface Lead extends LeadPayload {
  updated_at: string;
}

export interface LeadDetail extends Lead {
  conversation: { id: number; messages: Message[] };
}

type LeadRow = LeadRecord;

// An empty form field means "not given"; whitespace-only counts as empty too.
const field = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (typeof v === "string" && v.trim() === "" ? null : v), schema.nullish());

const fields = {
  name: field(text("name", { max: 255 })),
  email: field(email("email")),
  phone: field(text("phone", { max: 50 })),
  message: field(text("message", { max: 10_000 })),
};
/** Body of the chatbot leads endpoint. */
export const captureSchema = body(fields);
/** Body of `PUT /leads/{id}`. */
export const updateSchema = body({ ...fields, company: field(text("company", { max: 255 })) });
/** Query of `GET /leads`. */
export const listSchema = z.object(pageQueryShape, { error: "The query must be an object." });

const toLead = (row: LeadRow): Lead => ({
  id: row.id,
  name: row.name,
  email: row.email,
  phone: row.phone,
  company: row.company,
  message: row.message,
  source: row.source,
  source_url: row.source_url,
  agent: agentOf(row),
  conversation_id: row.conversation_id,
  session_id: row.session_id,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

const trimmed = (s: string | null | undefined) => (s === null || s === undefined ? null : s.trim());

export type Leads = ReturnType<typeof createLeads>;

export interface LeadsDeps {
  chatbots: Chatbots;
  conversations: Conversations;
  messages: Messages;
  events: EventBus;
}

/**
 * Leads: contact details captured in a conversation, and their account-level
 * listing and editing.
 *
 * @example
 * const lead = service.leads.capture(orgId, "demo", conversationId, { email: "ana@example.com" });
 * service.leads.update(orgId, lead.lead_id, { company: "Example Ltd" });
 */
export function createLeads(store: LeadStore, { chatbots, conversations, messages, events }: LeadsDeps) {
  const ofOrganization = async (organizationId: number, id: number): Promise<LeadRow> => {
    const row = await store.find(id);
    if (!row) throw ChatsvcError.notFound("Lead not found");
    if (row.organization_id !== organizationId) throw ChatsvcError.forbidden("You do not have access to this lead");
    return row;
  };

  return {
    /** Stores a lead for a conversation and fires `lead_captured`. At least one of name, email, phone. */
    async capture(organizationId: number, slug: string, conversationId: number, input: LeadInput | undefined): Promise<CapturedLead> {
      const conversation = await conversations.ofChatbot(await chatbots.resolve(organizationId, slug), conversationId);
      const data = parse(captureSchema, input ?? {});
      if (!data.name && !data.email && !data.phone) {
        const message = "At least one of name, email or phone is required.";
        throw ChatsvcError.validation({ name: [message], email: [message], phone: [message] }, message);
      }
      const { result: row, events: recorded } = await store.capture(
        {
          organization_id: organizationId,
          chatbot_id: conversation.chatbot_id,
          conversation_id: conversation.id,
          name: trimmed(data.name),
          email: trimmed(data.email),
          phone: trimmed(data.phone),
          message: data.message ?? null,
          source: conversation.source,
          source_url: conversation.source_url,
          created_at: nowIso(),
        },
        (created) => {
          const { updated_at: _, ...payload } = toLead(created);
          return { name: "lead_captured", organizationId, data: payload };
        },
      );
      events.publish(recorded);
      return { lead_id: row.id, conversation_id: row.conversation_id, name: row.name, email: row.email, phone: row.phone };
    },

    /** Account level: leads of the organisation, newest first. */
    async list(organizationId: number, query: PageQuery = {}): Promise<Page<Lead>> {
      const q = parse(listSchema, query);
      const filter = await listFilters(chatbots, organizationId, q);
      const { page = 1, per_page: perPage = DEFAULT_PER_PAGE } = q;
      const { total, rows } = await store.page(filter, { limit: perPage, offset: (page - 1) * perPage });
      return { data: rows.map(toLead), meta: pageMeta({ page, perPage, total, count: rows.length }) };
    },

    /** Account level: one lead with its conversation's transcript. */
    async get(organizationId: number, id: number): Promise<LeadDetail> {
      const row = await ofOrganization(organizationId, id);
      return { ...toLead(row), conversation: { id: row.conversation_id, messages: await messages.visible(row.conversation_id, organizationId) } };
    },

    /** Account level: partial update of name, email, phone, company, message (at least one). */
    async update(organizationId: number, id: number, input: LeadUpdateInput | undefined): Promise<Lead> {
      const row = await ofOrganization(organizationId, id);
      const data = parse(updateSchema, input ?? {});
      const patch = { name: trimmed(data.name), email: trimmed(data.email), phone: trimmed(data.phone), company: trimmed(data.company), message: data.message ?? null };
      if (Object.values(patch).every((v) => v === null)) {
        throw ChatsvcError.validation({ body: ["Nothing to update: give at least one of name, email, phone, company or message."] });
      }
      const updated = await store.update(row.id, { ...patch, updated_at: nowIso() });
      if (!updated) throw ChatsvcError.notFound("Lead not found");
      return toLead(updated);
    },
  };
}
