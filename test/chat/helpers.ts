import type { ChatService } from "../../src/service.js";
import type { Harness } from "../support/harness.js";
import { sqlOf } from "../support/sql.js";

/** A small knowledge base about a fictional product, so replies have something to quote. */
export const DOCS = [
  {
    name: "install.md",
    content:
      "Installing Widgetron\n\nWidgetron installs with npm install widgetron on Node 20 or newer.\n\nThe installer creates a widgetron.config.json file in the project folder.",
  },
  {
    name: "billing.md",
    content: "Billing and plans\n\nThe Pro plan costs 49 euros per month and includes priority support.\n\nInvoices are emailed on the first day of each month.",
  },
];

export async function ingestDocs(service: ChatService, slug = "demo", docs: { name: string; content: string }[] = DOCS): Promise<void> {
  await service.knowledge.ingest(slug, docs);
}

/** Opens a conversation with the tenant's demo bot over HTTP and returns its id. */
export async function openConversation(h: Harness, body: unknown = {}, slug = "demo"): Promise<number> {
  const res = await h.call(`/chatbots/${slug}/conversations`, { json: body });
  if (res.status !== 201) throw new Error(`could not open a conversation: ${res.status} ${res.text}`);
  return res.body.data.conversation_id;
}

/** Row counts of the tables a chat request writes to. */
export async function rowCounts(service: ChatService): Promise<Record<string, number>> {
  const sql = sqlOf(service);
  const count = async (table: string) => (await sql.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))!.n;
  return {
    conversations: await count("conversations"),
    messages: await count("messages"),
    leads: await count("leads"),
    credit_ledger: await count("credit_ledger"),
    credits_used: (await sql.get<{ n: number }>("SELECT coalesce(sum(credits_used), 0) AS n FROM credit_ledger"))!.n,
    webhook_deliveries: await count("webhook_deliveries"),
  };
}

/** Finds the branding element in reply HTML. */
export const BRANDING = /<div class="svc-branding">[\s\S]*?<\/div>/;
