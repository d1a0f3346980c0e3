import { createHash } from "node:crypto";
import type { ChatService } from "../../src/service.js";
import { ingestDocs } from "../chat/helpers.js";
import { addTenant, request, type ApiResponse, type Harness } from "../support/harness.js";
import { sqlOf } from "../support/sql.js";

/**
 * Tables whose rows the API can change; knowledge tables are written only by ingestion, which has no endpoint.
 * Tables derived from these by triggers (daily counters, unanswered questions, citations) follow them.
 */
const MUTABLE_TABLES = [
  "organizations",
  "users",
  "api_keys",
  "chatbots",
  "conversations",
  "messages",
  "leads",
  "credit_ledger",
  "webhooks",
  "webhook_deliveries",
  "settings",
  "corrections",
  "widget_budgets",
  "audit_log",
];

/**
 * A digest of every row the API can change. `api_keys.last_used_at` is left
 * out: successful requests update it off the request path, on a timer.
 */
export async function checksum(service: ChatService): Promise<string> {
  const sql = sqlOf(service);
  const hash = createHash("sha256");
  // Read at once (on PostgreSQL, over several pooled connections), hashed in the tables' order; each ordered by primary key (every table's first column) on both engines.
  const tables = await Promise.all(MUTABLE_TABLES.map((table) => sql.all(`SELECT * FROM ${table} ORDER BY 1, 2`)));
  MUTABLE_TABLES.forEach((table, i) => {
    for (const row of tables[i]!) {
      if (table === "api_keys") delete row.last_used_at;
      hash.update(`${table}:${JSON.stringify(row)}\n`);
    }
  });
  return hash.digest("hex");
}

/** One organisation's records of every kind, as created through the API. */
export interface TenantRecords {
  key: string;
  slug: string;
  organizationId: number;
  conversationId: number;
  /** An assistant message of that conversation (rateable, regenerable). */
  assistantMessageId: number;
  userMessageId: number;
  leadId: number;
  webhookId: number;
  /** A second conversation, already ended. */
  endedConversationId: number;
}

const call = (h: Harness, key: string, path: string, init: RequestInit & { json?: unknown } = {}) => request(`${h.api}${path}`, { ...init, key });

function expectStatus(res: ApiResponse, status: number, what: string): ApiResponse {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${res.text}`);
  return res;
}

/** Creates a conversation with an answered message, a lead, a webhook and an ended conversation, over HTTP. */
export async function seedTenant(h: Harness, key: string, slug: string, organizationId: number, webhookUrl: string): Promise<TenantRecords> {
  const conversationId = expectStatus(await call(h, key, `/chatbots/${slug}/conversations`, { json: { visitor_id: `visitor-${slug}`, visitor_name: `Name of ${slug}` } }), 201, "open").body.data
    .conversation_id as number;
  const sent = expectStatus(await call(h, key, `/chatbots/${slug}/conversations/${conversationId}/messages`, { json: { message: `How do I install Widgetron for ${slug}?` } }), 200, "send");
  const history = expectStatus(await call(h, key, `/chatbots/${slug}/conversations/${conversationId}`), 200, "history").body.data;
  const userMessageId = history.messages.find((m: { role: string }) => m.role === "user").id as number;
  const leadId = expectStatus(await call(h, key, `/chatbots/${slug}/conversations/${conversationId}/leads`, { json: { name: `Lead ${slug}`, email: `lead@${slug}.test` } }), 201, "lead").body.data
    .lead_id as number;
  const webhookId = expectStatus(await call(h, key, "/webhooks", { json: { url: webhookUrl, events: ["lead_captured", "conversation_started", "conversation_ended", "message_received"] } }), 201, "webhook")
    .body.data.id as number;
  const endedConversationId = expectStatus(await call(h, key, `/chatbots/${slug}/conversations`, { json: {} }), 201, "open second").body.data.conversation_id as number;
  expectStatus(await call(h, key, `/chatbots/${slug}/conversations/${endedConversationId}/end`, { method: "POST" }), 200, "end");
  return { key, slug, organizationId, conversationId, assistantMessageId: sent.body.data.message_id, userMessageId, leadId, webhookId, endedConversationId };
}

/**
 * Two organisations on one harness (A is the harness's own), each with a
 * knowledge base and records of every kind. The harness must allow private
 * webhook addresses.
 */
export async function seedTwoTenants(h: Harness, webhookUrl: (tenant: "a" | "b") => string): Promise<{ a: TenantRecords; b: TenantRecords }> {
  const other = await addTenant(h.service, "Beta");
  await ingestDocs(h.service, "demo");
  await ingestDocs(h.service, other.chatbot.slug);
  const a = await seedTenant(h, h.tenant.key.key, "demo", h.tenant.organization.id, webhookUrl("a"));
  const b = await seedTenant(h, other.key.key, other.chatbot.slug, other.organization.id, webhookUrl("b"));
  return { a, b };
}

/** Waits until no delivery is pending, so background work stops changing rows. */
export async function settleDeliveries(service: ChatService): Promise<void> {
  const pending = async () => (await sqlOf(service).get<{ n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'"))!.n;
  await until(async () => (await pending()) === 0, 10_000, "webhook deliveries to settle");
}

/** Polls until `check` holds. */
export async function until(check: () => boolean | Promise<boolean>, ms = 5_000, what = "condition"): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what} not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
