import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expect, expectTypeOf, it } from "vitest";
import type * as Client from "../../src/client/index.js";
import type * as Chat from "../../src/chat/chat.js";
import type * as Chatbots from "../../src/core/chatbots.js";
import type { Branding } from "../../src/core/branding.js";
import type * as Conversations from "../../src/core/conversations.js";
import type { FieldErrors } from "../../src/core/errors.js";
import type { AgentRef, EventName } from "../../src/core/events.js";
import type { EventAction } from "../../src/chat/chat.js";
import type * as Leads from "../../src/core/leads.js";
import type { Message, Source } from "../../src/core/messages.js";
import type { PageLinks, PageMeta, PageQuery } from "../../src/core/pagination.js";
import type { AccountInfo } from "../../src/http/schemas/account.js";
import type { ListedWebhook, RegisteredWebhookData } from "../../src/http/schemas/webhooks.js";
import type { RegisterWebhookInput } from "../../src/webhooks/registry.js";
import type { BudgetName, WidgetBudget, WidgetBudgetInput } from "../../src/core/widget-budgets.js";

it("the client's own copies of the API's shapes equal the server's (checked by tsc)", () => {
  expectTypeOf<Client.FieldErrors>().toEqualTypeOf<FieldErrors>();
  expectTypeOf<Client.EventName>().toEqualTypeOf<EventName>();
  expectTypeOf<Client.AgentRef>().toEqualTypeOf<AgentRef>();
  expectTypeOf<Client.EventAction>().toEqualTypeOf<EventAction>();
  expectTypeOf<Client.AccountInfo>().toEqualTypeOf<AccountInfo>();
  expectTypeOf<Client.Branding>().toEqualTypeOf<Branding>();
  expectTypeOf<Client.Appearance>().toEqualTypeOf<Chatbots.Appearance>();
  expectTypeOf<Client.ChatbotListItem>().toEqualTypeOf<Chatbots.ChatbotListItem>();
  expectTypeOf<Client.ChatbotDetail>().toEqualTypeOf<Chatbots.ChatbotDetail>();
  expectTypeOf<Client.Source>().toEqualTypeOf<Source>();
  expectTypeOf<Client.Message>().toEqualTypeOf<Message>();
  expectTypeOf<Client.ReplyData>().toEqualTypeOf<Chat.ReplyData>();
  expectTypeOf<Client.CreditMeta>().toEqualTypeOf<Chat.CreditMeta>();
  expectTypeOf<Client.RateInput>().toEqualTypeOf<Chat.RateInput>();
  expectTypeOf<Client.PostMessageInput>().toEqualTypeOf<Chat.PostMessageInput>();
  expectTypeOf<Client.PageQuery>().toEqualTypeOf<PageQuery>();
  expectTypeOf<Client.PageMeta>().toEqualTypeOf<PageMeta>();
  expectTypeOf<Client.PageLinks>().toEqualTypeOf<PageLinks>();
  expectTypeOf<Client.StartConversationInput>().toEqualTypeOf<Conversations.StartConversationInput>();
  expectTypeOf<Client.StartedConversation>().toEqualTypeOf<Conversations.StartedConversation>();
  expectTypeOf<Client.ConversationHistory>().toEqualTypeOf<Conversations.ConversationHistory>();
  expectTypeOf<Client.ConversationRecord>().toEqualTypeOf<Conversations.ConversationRecord>();
  expectTypeOf<Client.ConversationDetail>().toEqualTypeOf<Conversations.ConversationDetail>();
  expectTypeOf<Client.ConversationListQuery>().toEqualTypeOf<Conversations.ConversationListQuery>();
  expectTypeOf<Client.EndedConversation>().toEqualTypeOf<Conversations.EndedConversation>();
  expectTypeOf<Client.LeadInput>().toEqualTypeOf<Leads.LeadInput>();
  expectTypeOf<Client.LeadUpdateInput>().toEqualTypeOf<Leads.LeadUpdateInput>();
  expectTypeOf<Client.CapturedLead>().toEqualTypeOf<Leads.CapturedLead>();
  expectTypeOf<Client.Lead>().toEqualTypeOf<Leads.Lead>();
  expectTypeOf<Client.LeadDetail>().toEqualTypeOf<Leads.LeadDetail>();
  expectTypeOf<Client.RegisterWebhookInput>().toEqualTypeOf<RegisterWebhookInput>();
  expectTypeOf<Client.RegisteredWebhookData>().toEqualTypeOf<RegisteredWebhookData>();
  expectTypeOf<Client.ListedWebhook>().toEqualTypeOf<ListedWebhook>();
  expectTypeOf<Client.BudgetName>().toEqualTypeOf<BudgetName>();
  expectTypeOf<Client.WidgetBudget>().toEqualTypeOf<WidgetBudget>();
  expectTypeOf<Client.WidgetBudgetInput>().toEqualTypeOf<WidgetBudgetInput>();
});

it("src/client imports nothing from the server side: only its own files, the shared SSE parser and ofetch", () => {
  const dir = join(import.meta.dirname, "..", "..", "src", "client");
  const imports = readdirSync(dir).flatMap((file) =>
    [...readFileSync(join(dir, file), "utf8").matchAll(/^\s*(?:import|export)\b[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]),
  );
  expect(imports.filter((spec) => !/^\.\/[\w-]+\.js$/.test(spec) && spec !== "../net/sse.js" && spec !== "ofetch")).toEqual([]);
});
