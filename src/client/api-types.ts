// The shapes the API answers with and accepts, for the client alone. They are written out rather than imported from
// the server's modules so that `chatsvc/client`'s declarations stand alone: a consumer compiling with
// `skipLibCheck: false` must not need zod, better-sqlite3 or drizzle types. test/client/types.test.ts checks that they
// stay equal to the server's.

/** Field name -> human-readable messages, as sent in a 422 envelope's `errors`. */
export type FieldErrors = Record<string, string[]>;

export type EventName = "lead_captured" | "conversation_started" | "conversation_ended" | "message_received" | "budget_exhausted" | "handoff_requested";

/** `GET /auth/test` data: the account the key belongs to. */
export interface AccountInfo {
  user_id: number;
  organization_id: number;
  email: string;
}

/** `agent` in event payloads and records: the chatbot the record belongs to. */
export interface AgentRef {
  id: number;
  name: string;
  slug: string;
}

/** The `branding` object of a chatbot's configuration. */
export interface Branding {
  required: boolean;
  text: string;
  url: string;
  icon_url: string;
}

export interface Appearance {
  primary_color: string;
  bubble_color: string;
  widget_theme: "light" | "dark";
  profile_image: string;
  chat_icon: string | null;
  bubble_message: string;
  show_bubble_message: boolean;
}

/** A chatbot as `GET /chatbots` lists it. */
export interface ChatbotListItem {
  id: number;
  slug: string;
  name: string;
  description: string;
  language: string;
  is_active: boolean;
  created_at: string;
}

/** A chatbot's configuration as `GET /chatbots/{slug}` returns it. */
export interface ChatbotDetail extends ChatbotListItem {
  display_name: string;
  greeting_message: string;
  fallback_message: string;
  placeholder_text: string;
  has_knowledge_base: boolean;
  appearance: Appearance;
  branding: Branding;
  /** Whether visitors may ask for a person (the widget shows a button for it). */
  handoff_enabled: boolean;
}

/** A knowledge source a reply drew from, or the answer correction that gave the reply. */
export interface Source {
  /** The document's name; for a correction its `source_name`, else its question. */
  name: string;
  /** `file`, `url` or `correction`. */
  type: string;
  /** Relevance in 0..1. */
  score: number;
  /** The correction's id, for `type` `correction`. */
  id?: number;
  /** Set for web pages (a clickable link when `type` is `url`), and for a correction given a `source_url`. */
  url?: string;
  /** A file's title (its first heading), when it has one other than its name. */
  title?: string;
}

/** A message as history shows it. */
export interface Message {
  id: number;
  /** `agent`: a person's reply, sent by an operator while (or after) the conversation was handed to people. */
  role: "user" | "assistant" | "agent";
  /** Plain text for `user` (escape before rendering); sanitised HTML for `assistant` (with branding when required) and `agent` (never branded). */
  content: string;
  /** Only on `agent` messages: the person who wrote it, when the operator named them (else null). */
  agent_name?: string | null;
  sources: Source[];
  created_at: string;
}

/** One entry of a send-message reply's `actions`: what an event set in motion. */
export interface EventAction {
  type: "webhook";
  event: EventName;
  deliveries: number;
}

/** `data` of a send-message (and regenerate) reply. */
export interface ReplyData {
  /** Sanitised HTML, with the branding element while it is required. */
  reply: string;
  conversation_id: number;
  /** Id of the assistant message, for rating. */
  message_id: number;
  cannot_answer: boolean;
  sources: Source[];
  /** What the message set in motion, e.g. `{type: "webhook", event: "message_received", deliveries: 1}`. */
  actions: EventAction[];
  model: string;
  response_ms: number;
}

/**
 * `data` of a send-message reply while a person handles the conversation
 * (`status: "human"`): the visitor's message is stored and nobody answered yet;
 * the person's reply arrives later as an `agent` message in history.
 */
export interface HumanHandledData {
  reply: null;
  handled_by: "human";
  conversation_id: number;
  /** Id of the visitor's stored message. */
  user_message_id: number;
  actions: EventAction[];
}

/** `meta` of a send-message reply: the organisation's credits after this message. */
export interface CreditMeta {
  credits_used: number;
  credits_max: number;
  credits_remaining: number;
  this_message: number;
}

export interface RateInput {
  message_id: number;
  rating: "good" | "bad";
}

export interface PostMessageInput {
  message: string;
  /** Default `assistant`; `agent` for a person's reply (e.g. after a handoff), `user` for a relayed visitor message. */
  role?: "user" | "assistant" | "agent";
  /** Only with `role: "agent"`: the person's name as the visitor sees it. */
  agent_name?: string | null;
}

/** What list endpoints accept; numbers may come as query-string digits. */
export interface PageQuery {
  page?: number | string;
  per_page?: number | string;
  /** Chatbot slug of the caller's organisation. */
  chatbot?: string;
  /** ISO 8601 timestamp: only records created at or after it. */
  since?: string;
  /** ISO 8601 timestamp: only records created before it. */
  until?: string;
}

/** `meta` of a list response. */
export interface PageMeta {
  current_page: number;
  per_page: number;
  total: number;
  last_page: number;
  from: number | null;
  to: number | null;
}

/** `links` of a list response: path and query (absolute on `publicUrl` when configured), null where there is no such page. */
export interface PageLinks {
  first: string;
  last: string;
  prev: string | null;
  next: string | null;
}

export interface StartConversationInput {
  visitor_id?: string | null;
  visitor_name?: string | null;
  visitor_email?: string | null;
  visitor_phone?: string | null;
  metadata?: Record<string, unknown> | null;
}

/** `POST /chatbots/{slug}/conversations` data. */
export interface StartedConversation {
  conversation_id: number;
  session_id: string;
  visitor_id: string | null;
  started_at: string;
  is_ended: boolean;
}

/** `GET /chatbots/{slug}/conversations/{id}` data. */
export interface ConversationHistory {
  id: number;
  visitor_id: string | null;
  visitor_name: string | null;
  visitor_email: string | null;
  is_ended: boolean;
  /** `active` (the bot answers), `human` (a person answers; the bot stays silent) or `ended`. */
  status: ConversationStatus;
  source: string;
  started_at: string;
  last_message_at: string;
  ended_at: string | null;
  message_count: number;
  messages: Message[];
}

export type ConversationStatus = "active" | "human" | "ended";

/** A conversation as the account-level endpoints list it: the webhook shape plus state. */
export interface ConversationRecord {
  id: number;
  session_id: string;
  /** `human` while a person answers instead of the bot. */
  status: "active" | "human" | "ended";
  source: string;
  source_url: string | null;
  agent: AgentRef;
  visitor: { name: string | null; email: string | null; ip: string | null; country: string | null };
  started_at: string;
  created_at: string;
  visitor_id: string | null;
  is_ended: boolean;
  ended_at: string | null;
  last_message_at: string;
  message_count: number;
  /** The first time the conversation went to a person (operator takeover or visitor request); never cleared. */
  handed_off_at: string | null;
  /** Why it went to a person the last time, when someone said. */
  handoff_reason: string | null;
}

/** A message as operators read it (`GET /conversations/{id}`): replies carry the visitor's rating. */
export interface RatedMessage extends Message {
  /** Only on `assistant` messages: the visitor's rating, null when not rated. */
  rating?: "good" | "bad" | null;
}

export interface ConversationDetail extends ConversationRecord {
  messages: RatedMessage[];
}

export interface ConversationListQuery extends PageQuery {
  status?: ConversationStatus;
  /** `good` or `bad`: a reply of the conversation was rated so; `unrated`: none of its replies is rated. */
  rating?: "good" | "bad" | "unrated";
  /** Words in a message of the conversation (visitor's or reply), case-insensitive. */
  q?: string;
}

export interface HandoffInput {
  /** Why the conversation goes to a person (shown to operators, sent in `handoff_requested`). */
  reason?: string | null;
}

/** What a visitor's request for a person answers (chatbot API). */
export interface HandoffRequested {
  conversation_id: number;
  status: "human";
  handed_off_at: string;
  /** One entry per event fired: empty when the conversation was already with a person. */
  actions: { type: "webhook"; event: EventName; deliveries: number }[];
}

/** What ending a conversation answers. */
export interface EndedConversation {
  message: string;
  conversation_id: number;
  ended_at: string;
  duration_seconds: number;
  message_count: number;
}

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
export interface Lead {
  id: number;
  name: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  message: string | null;
  source: string;
  source_url: string | null;
  agent: AgentRef;
  conversation_id: number;
  session_id: string;
  created_at: string;
  updated_at: string;
}

export interface LeadDetail extends Lead {
  conversation: { id: number; messages: Message[] };
}

/** An answer correction: a visitor question matching `question` is answered with `answer`, without a model call. */
export interface Correction {
  id: number;
  question: string;
  /** Markdown, as given. */
  answer: string;
  source_name: string | null;
  source_url: string | null;
  created_at: string;
  updated_at: string;
}

export interface CorrectionInput {
  question: string;
  answer: string;
  source_name?: string | null;
  source_url?: string | null;
}

export type CorrectionUpdateInput = Partial<CorrectionInput>;

/** Body of `POST /conversations/{id}/messages/{message_id}/correct`: the question is the visitor message the reply answered. */
export type CorrectMessageInput = Omit<CorrectionInput, "question">;

export interface RegisterWebhookInput {
  /** http(s) URL; registering a URL the organisation already has updates that webhook. */
  url: string;
  /** Non-empty subset of the event names. */
  events: EventName[];
  /** Default: the URL's host. */
  name?: string | null;
}

/** `POST /webhooks` data. */
export interface RegisteredWebhookData {
  id: number;
  name: string;
  url: string;
  events: EventName[];
  is_active: boolean;
  /** The signing secret, only when the call created the webhook. */
  secret?: string;
}

/** What `POST /webhooks/{id}/test` answers: the outcome of one signed `webhook_test` delivery. */
export interface WebhookTestData {
  webhook_id: number;
  event: "webhook_test";
  /** The `webhook-id` header the test was sent with. */
  message_id: string;
  /** True when the receiver answered 2xx within the delivery timeout. */
  delivered: boolean;
  /** The receiver's HTTP status; null when no answer came. */
  status: number | null;
  /** Why the delivery failed; null when delivered. */
  error: string | null;
  duration_ms: number;
}

/** A webhook as `GET /webhooks` lists it: no owner, no secret. */
export interface ListedWebhook {
  id: number;
  name: string;
  url: string;
  events: EventName[];
  is_active: boolean;
  total_triggers: number;
  failed_triggers: number;
  last_triggered_at: string | null;
  last_failure: { at: string; status: number | null; error: string } | null;
  created_at: string;
}

export type BudgetName = "visitor_per_day" | "chatbot_per_hour" | "chatbot_per_day";

/** A chatbot's widget budgets: the limits in force (0: no limit) and the chatbot's own settings (null: the default). */
export interface WidgetBudget {
  limits: Record<BudgetName, number>;
  overrides: Record<BudgetName, number | null>;
}

/** A limit per budget (0 for none), null for the configured default; absent ones stay. */
export type WidgetBudgetInput = Partial<Record<BudgetName, number | null>>;

/** Query of the exports: `format` (`jsonl` or `csv`; conversations default to JSONL, leads to CSV), chatbot slug, ISO `since`/`until` (inclusive). */
export interface ExportQuery {
  format?: "jsonl" | "csv";
  chatbot?: string;
  since?: string;
  until?: string;
}

/** A message in a conversation export: stored content (assistant HTML without the branding element), with its rating. */
export interface ExportedMessage {
  id: number;
  /** `agent`: a person's reply (see human handoff). */
  role: "user" | "assistant" | "agent";
  content: string;
  /** The person who wrote an `agent` message, when named; null otherwise. */
  agent_name: string | null;
  sources: Source[];
  rating: "good" | "bad" | null;
  cannot_answer: boolean;
  created_at: string;
}

/** A line of the JSONL conversation export: the account-level record with the visitor's phone, metadata and messages. */
export interface ConversationExportLine extends ConversationRecord {
  visitor_phone: string | null;
  metadata: Record<string, unknown>;
  messages: ExportedMessage[];
}

/** Which visitor `DELETE /visitors` erases: exactly one of the two. */
export interface EraseVisitorInput {
  visitor_id?: string;
  email?: string;
}

/** Rows an erasure or a retention pass deleted. */
export interface DeletedCounts {
  conversations: number;
  messages: number;
  leads: number;
  /** Webhook outbox rows whose payload was about the deleted conversations. */
  webhook_deliveries: number;
}

/** An audit log entry: what an erasure or a retention pass deleted, when and on whose behalf. */
export interface AuditEntry {
  id: number;
  organization_id: number;
  action: "visitor_erased" | "retention";
  /** `key sk_live_…` (the API key's prefix), `cli …` or `serve (retention)`. */
  actor: string;
  /** What was selected: `{selector}` or `{retention_days, cutoff}`; never the erased data. */
  detail: Record<string, unknown>;
  counts: DeletedCounts;
  created_at: string;
}

/** Query of `GET /analytics`: default the last 30 UTC days up to now, by day; a date-only `until` includes that day. */
export interface AnalyticsQuery {
  /** Chatbot slug of the caller's organisation; all of its chatbots when left out. */
  chatbot?: string;
  /** ISO 8601 date or date-time. */
  since?: string;
  until?: string;
  /** UTC days, or weeks from Monday. */
  interval?: "day" | "week";
}

/** Query of `GET /analytics/unanswered`. */
export interface UnansweredQuery extends Omit<AnalyticsQuery, "interval"> {
  page?: number | string;
  per_page?: number | string;
}

/** Query of `GET /analytics/sources`. */
export interface SourcesQuery {
  chatbot?: string;
  page?: number | string;
  per_page?: number | string;
}

/** What `GET /analytics` counts per bucket and in total. */
export interface AnalyticsCounts {
  conversations: number;
  visitor_messages: number;
  /** Bot replies that were not the fallback (replaced replies and operator messages left out). */
  answered: number;
  cannot_answer: number;
  /** Ratings of replies stored in the bucket. */
  good_ratings: number;
  bad_ratings: number;
  leads: number;
  /** Conversations that went to a person, counted once when they first did. */
  handoffs: number;
}

export interface AnalyticsBucket extends AnalyticsCounts {
  /** First and last UTC day of the bucket, `YYYY-MM-DD`. */
  start: string;
  end: string;
}

export interface AnalyticsOverview {
  chatbot: string | null;
  interval: "day" | "week";
  since: string;
  until: string;
  timezone: "UTC";
  /** Every bucket of the range, zeros where nothing happened. */
  buckets: AnalyticsBucket[];
  totals: AnalyticsCounts;
}

/** Near-duplicate visitor questions whose replies could not answer or were rated bad. */
export interface QuestionGroup {
  question: string;
  count: number;
  cannot_answer: number;
  bad_ratings: number;
  last_asked_at: string;
  example_conversation_id: number;
  wordings: string[];
}

/** A knowledge-base document and how often replies cited it. */
export interface SourceStats {
  document_id: number;
  chatbot: string;
  name: string;
  type: string;
  url: string | null;
  cited: number;
  last_cited_at: string | null;
}
