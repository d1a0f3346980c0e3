import { z } from "zod";
import type { Chatbots } from "./chatbots.js";
import { nowIso } from "./clock.js";
import { agentOf, listFilters, type Conversations } from "./conversations.js";
import type { Db } from "./db/open.js";
import { ChatsvcError } from "./errors.js";
import type { EventBus, LeadPayload } from "./events.js";
import type { Message, Messages } from "./messages.js";
import { pageQueryShape, readPage, type Page, type PageQuery } from "./pagination.js";
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

interface LeadRow {
  id: number;
  organization_id: number;
  chatbot_id: number;
  conversation_id: number;
  name: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  message: string | null;
  source: string;
  source_url: string | null;
  created_at: string;
  updated_at: string;
  agent_name: string;
  agent_slug: string;
  session_id: string;
}

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

const SELECT = `SELECT l.*, b.name AS agent_name, b.slug AS agent_slug, c.session_id
  FROM leads l JOIN chatbots b ON b.id = l.chatbot_id JOIN conversations c ON c.id = l.conversation_id`;

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
export function createLeads(db: Db, { chatbots, conversations, messages, events }: LeadsDeps) {
  const sqlite = db.$client;
  const byId = sqlite.prepare<[number], LeadRow>(`${SELECT} WHERE l.id = ?`);
  const insert = sqlite.prepare(
    `INSERT INTO leads (organization_id, chatbot_id, conversation_id, name, email, phone, message, source, source_url, created_at, updated_at)
     VALUES (@org, @chatbot, @conversation, @name, @email, @phone, @message, @source, @sourceUrl, @now, @now) RETURNING id`,
  );
  const update = sqlite.prepare(
    `UPDATE leads SET name = coalesce(@name, name), email = coalesce(@email, email), phone = coalesce(@phone, phone),
       company = coalesce(@company, company), message = coalesce(@message, message), updated_at = @now WHERE id = @id`,
  );
  const filters = `l.organization_id = @org AND (@chatbot IS NULL OR l.chatbot_id = @chatbot)
    AND (@since IS NULL OR l.created_at >= @since) AND (@until IS NULL OR l.created_at <= @until)`;
  const countPage = sqlite.prepare<Record<string, unknown>, { n: number }>(`SELECT COUNT(*) AS n FROM leads l WHERE ${filters}`);
  const listPage = sqlite.prepare<Record<string, unknown>, LeadRow>(`${SELECT} WHERE ${filters} ORDER BY l.created_at DESC, l.id DESC LIMIT @limit OFFSET @offset`);

  const ofOrganization = (organizationId: number, id: number): LeadRow => {
    const row = byId.get(id);
    if (!row) throw ChatsvcError.notFound("Lead not found");
    if (row.organization_id !== organizationId) throw ChatsvcError.forbidden("You do not have access to this lead");
    return row;
  };

  return {
    /** Stores a lead for a conversation and fires `lead_captured`. At least one of name, email, phone. */
    capture(organizationId: number, slug: string, conversationId: number, input: LeadInput | undefined): CapturedLead {
      const conversation = conversations.ofChatbot(chatbots.resolve(organizationId, slug), conversationId);
      const data = parse(captureSchema, input ?? {});
      if (!data.name && !data.email && !data.phone) {
        const message = "At least one of name, email or phone is required.";
        throw ChatsvcError.validation({ name: [message], email: [message], phone: [message] }, message);
      }
      const now = nowIso();
      const row = events.transaction(db, (_tx, emit) => {
        const { id } = insert.get({
          org: organizationId,
          chatbot: conversation.chatbot_id,
          conversation: conversation.id,
          name: trimmed(data.name),
          email: trimmed(data.email),
          phone: trimmed(data.phone),
          message: data.message ?? null,
          source: conversation.source,
          sourceUrl: conversation.source_url,
          now,
        }) as { id: number };
        const created = byId.get(id)!;
        const { updated_at: _, ...payload } = toLead(created);
        emit({ name: "lead_captured", organizationId, data: payload });
        return created;
      });
      return { lead_id: row.id, conversation_id: row.conversation_id, name: row.name, email: row.email, phone: row.phone };
    },

    /** Account level: leads of the organisation, newest first. */
    list(organizationId: number, query: PageQuery = {}): Page<Lead> {
      const q = parse(listSchema, query);
      return readPage({ count: countPage, page: listPage }, listFilters(chatbots, organizationId, q), q, toLead);
    },

    /** Account level: one lead with its conversation's transcript. */
    get(organizationId: number, id: number): LeadDetail {
      const row = ofOrganization(organizationId, id);
      return { ...toLead(row), conversation: { id: row.conversation_id, messages: messages.visible(row.conversation_id, organizationId) } };
    },

    /** Account level: partial update of name, email, phone, company, message (at least one). */
    update(organizationId: number, id: number, input: LeadUpdateInput | undefined): Lead {
      const row = ofOrganization(organizationId, id);
      const data = parse(updateSchema, input ?? {});
      const patch = { name: trimmed(data.name), email: trimmed(data.email), phone: trimmed(data.phone), company: trimmed(data.company), message: data.message ?? null };
      if (Object.values(patch).every((v) => v === null)) {
        throw ChatsvcError.validation({ body: ["Nothing to update: give at least one of name, email, phone, company or message."] });
      }
      update.run({ ...patch, id: row.id, now: nowIso() });
      return toLead(byId.get(row.id)!);
    },
  };
}
