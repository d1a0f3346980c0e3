import { z } from "zod";
import type { CapturedLead, Lead, LeadDetail } from "../../core/leads.js";
import { agentSchema, integer, messageSchema, timestamp } from "./common.js";

export const capturedLeadSchema = z
  .strictObject({
    lead_id: integer,
    conversation_id: integer,
    name: z.string().nullable(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
  })
  .meta({ id: "CapturedLead" }) satisfies z.ZodType<CapturedLead>;

export const leadSchema = z
  .strictObject({
    id: integer,
    name: z.string().nullable(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    company: z.string().nullable(),
    message: z.string().nullable(),
    source: z.string(),
    source_url: z.string().nullable(),
    agent: agentSchema,
    conversation_id: integer,
    session_id: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "Lead", description: "The lead webhook shape plus `updated_at`" }) satisfies z.ZodType<Lead>;

export const leadDetailSchema = leadSchema
  .extend({ conversation: z.strictObject({ id: integer, messages: z.array(messageSchema) }) })
  .meta({ id: "LeadDetail", description: "A lead with its conversation's transcript" }) satisfies z.ZodType<LeadDetail>;
