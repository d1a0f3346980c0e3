import type { ListFilter, PageOf, PageRequest } from "./conversations.js";
import type { EventOf, WithEvents } from "./events.js";

/** A stored lead with its chatbot's name and slug and its conversation's session id. */
export interface LeadRecord {
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

export type NewLead = Pick<LeadRecord, "organization_id" | "chatbot_id" | "conversation_id" | "name" | "email" | "phone" | "message" | "source" | "source_url" | "created_at">;

/** Fields to change; null leaves a field as it is. */
export type LeadPatch = Pick<LeadRecord, "name" | "email" | "phone" | "company" | "message" | "updated_at">;

export interface LeadStore {
  /** One transaction: inserts the lead, records `event` (`lead_captured`) built from the stored lead. */
  capture(lead: NewLead, event: EventOf<LeadRecord>): Promise<WithEvents<LeadRecord>>;
  find(id: number): Promise<LeadRecord | undefined>;
  update(id: number, patch: LeadPatch): Promise<LeadRecord | undefined>;
  /** One page, newest first. */
  page(filter: ListFilter, page: PageRequest): Promise<PageOf<LeadRecord>>;
  /** Exports: the filtered leads (by `created_at`), oldest first, read in pages of at most `pageSize` (keyset on the id). */
  exportPages(filter: ListFilter, pageSize: number): AsyncIterable<LeadRecord[]>;
}
