export { createChatService, type ChatService } from "./service.js";
export type { ChatServiceOptions, ResolvedConfig, BrandingOptions, WebhookOptions, RetrievalOptions, ChunkingOptions } from "./config.js";
export { ChatsvcError, type FieldErrors } from "./core/errors.js";
export { toPlainText, type Branding } from "./core/branding.js";
export { ATTRIBUTION_NOTICE, type ApiKey, type IssuedApiKey, type CreateApiKeyInput, type Principal } from "./core/keys.js";
export type { Organization, CreateOrganizationInput, UpdateOrganizationInput } from "./core/orgs.js";
export type { User, CreateUserInput } from "./core/users.js";
export type { Appearance, Chatbot, ChatbotDetail, ChatbotListItem, CreateChatbotInput, UpdateChatbotInput } from "./core/chatbots.js";
export type { BootstrapOptions, BootstrapResult } from "./core/bootstrap.js";
export {
  EVENT_NAMES,
  type EventName,
  type EventListener,
  type EventAction,
  type DomainEvent,
  type EventPayloads,
  type LeadPayload,
  type ConversationPayload,
  type ConversationEndedPayload,
  type MessageReceivedPayload,
  type AgentRef,
} from "./core/events.js";
