export { createChatService, type ChatService } from "./service.js";
export type { ChatServiceOptions, ResolvedConfig, BrandingOptions, WebhookOptions, RetrievalOptions, ChunkingOptions, WidgetOptions, RateLimitOptions, LogLevel } from "./core/config.js";
export { ChatsvcError, type FieldErrors } from "./core/errors.js";
export { ModelError, isModelError, MODEL_FAILED_MESSAGE, type ModelFailureKind } from "./models/errors.js";
export type { ChatModel, ChatRequest, ChatResult, PromptMessage } from "./models/types.js";
export { toPlainText, type Branding } from "./core/branding.js";
export { ATTRIBUTION_NOTICE, type ApiKey, type IssuedApiKey, type CreateApiKeyInput, type Principal } from "./core/keys.js";
export type { Organization, CreateOrganizationInput, UpdateOrganizationInput } from "./core/orgs.js";
export type { User, CreateUserInput } from "./core/users.js";
export type { Appearance, Chatbot, ChatbotDetail, ChatbotListItem, CreateChatbotInput, UpdateChatbotInput } from "./core/chatbots.js";
export type {
  VisitorContext,
  StartConversationInput,
  StartedConversation,
  ConversationHistory,
  ConversationRecord,
  ConversationDetail,
  ConversationListQuery,
  EndedConversation,
  Conversations,
  ConversationStatus,
  HandoffInput,
  HandoffRequested,
} from "./core/conversations.js";
export type { Message, Source } from "./core/messages.js";
export type { Chat, ChatReply, ReplyData, HumanHandledData, CreditMeta, AnswerOptions, PendingReply, SendMessageInput, RateInput, PostMessageInput, EventAction } from "./chat/chat.js";
export type { Lead, LeadDetail, LeadInput, LeadUpdateInput, CapturedLead, Leads } from "./core/leads.js";
export { CREDIT_LIMIT_MESSAGE, type CreditStatus, type Credits } from "./core/credits.js";
export type { Page, PageMeta, PageLinks, PageQuery } from "./core/pagination.js";
export type { Health } from "./core/health.js";
export type { BootstrapOptions, BootstrapResult, BootstrapKnowledge } from "./bootstrap.js";
export type {
  Knowledge,
  KnowledgeDocument,
  IngestInput,
  IngestReport,
  IngestFailure,
  IngestProgress,
  IngestCallOptions,
  SyncReport,
  SyncRound,
  SyncedDocument,
  RetrievedChunk,
  SearchOptions,
} from "./knowledge/types.js";
export {
  EVENT_NAMES,
  type EventName,
  type EventListener,
  type DomainEvent,
  type EventPayloads,
  type LeadPayload,
  type ConversationPayload,
  type ConversationEndedPayload,
  type MessageReceivedPayload,
  type HandoffRequestedPayload,
  type AgentRef,
} from "./core/events.js";
export {
  BUDGET_NAMES,
  type BudgetName,
  type BudgetExhaustedPayload,
  type WidgetBudget,
  type WidgetBudgetInput,
  type WidgetBudgets,
} from "./core/widget-budgets.js";
export type { Idempotency, IdempotentRequest, IdempotentStart, StoredAnswer } from "./core/idempotency.js";
export {
  verifyWebhook,
  signWebhook,
  type VerifyWebhookOptions,
  type WebhookHeaders,
  type Webhook,
  type WebhookFailure,
  type RegisterWebhookInput,
  type RegisteredWebhook,
  type WebhookRegistry,
} from "./webhooks/index.js";
