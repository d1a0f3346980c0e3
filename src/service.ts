import { resolveConfig, type ChatServiceOptions, type ResolvedConfig } from "./config.js";
import { bootstrap, type BootstrapOptions, type BootstrapResult } from "./core/bootstrap.js";
import type { Branding } from "./core/branding.js";
import { createChatbots, type Chatbots } from "./core/chatbots.js";
import { createChat, type Chat } from "./core/chat.js";
import { createConversations, type Conversations } from "./core/conversations.js";
import { createCredits, type Credits } from "./core/credits.js";
import { createLeads, type Leads } from "./core/leads.js";
import { createMessages } from "./core/messages.js";
import { createRenderer } from "./core/render.js";
import { openDatabase, type Db } from "./core/db/open.js";
import { createWriteProbe } from "./core/db/write-probe.js";
import { createEventBus, type EventBus, type EventListener, type EventName } from "./core/events.js";
import { createHealthCheck, type Health } from "./core/health.js";
import { createKeys, type Keys } from "./core/keys.js";
import { createOrgs, type Orgs } from "./core/orgs.js";
import { createUsers, type Users } from "./core/users.js";
import { createWidgetBudgetStore } from "./core/db/widget-budget-store.js";
import { createIdempotencyStore } from "./core/db/idempotency-store.js";
import { createIdempotency, type Idempotency } from "./core/idempotency.js";
import { createWidgetBudgets, type WidgetBudgets } from "./core/widget-budgets.js";
import { createKnowledge } from "./knowledge/index.js";
import type { Knowledge } from "./knowledge/types.js";
import { createModels, type Models } from "./models/registry.js";
import { createWebhookRuntime, type WebhookRegistry } from "./webhooks/index.js";

/**
 * A running chatsvc: the database and every part built on it. Create it with
 * {@link createChatService}; call `close()` when done.
 */
export interface ChatService {
  readonly config: ResolvedConfig;
  readonly orgs: Orgs;
  readonly users: Users;
  readonly keys: Keys;
  readonly chatbots: Chatbots;
  /** Each chatbot's knowledge base: ingestion and search. */
  readonly knowledge: Knowledge;
  /** Opening, reading, ending and listing conversations. */
  readonly conversations: Conversations;
  /** Sending messages and getting AI replies, rating, regenerating, operator messages. */
  readonly chat: Chat;
  /** Leads captured in conversations. */
  readonly leads: Leads;
  /** Monthly credits per organisation. */
  readonly credits: Credits;
  /** Outbound webhooks of each organisation: register, list, delete. */
  readonly webhooks: WebhookRegistry;
  /** Each chatbot's widget message budgets: settings and counting. */
  readonly widgetBudgets: WidgetBudgets;
  /** `Idempotency-Key` records of each organisation (the HTTP API uses them). */
  readonly idempotency: Idempotency;
  /** The `branding` object for an organisation's chatbots. */
  branding(organizationId: number): Branding;
  /** True when the database has no organisation yet (first run). */
  isEmpty(): boolean;
  /**
   * Whether this instance can serve: open, and its database takes writes (a small
   * write, probed at most once a second; calls in between answer from the last probe).
   */
  health(): Health;
  /** First-run setup: an organisation, its owner, the `demo` chatbot and one API key. */
  bootstrap(options?: BootstrapOptions): Promise<BootstrapResult>;
  /** Listen to domain events after they are committed. Returns an unsubscribe function. */
  on<N extends EventName>(name: N | "*", listener: EventListener<N>): () => void;
  /** Flushes pending writes and closes the database. Safe to call twice. */
  close(): Promise<void>;
}

/** Internals shared by the service's parts; not part of the public API. */
export interface ServiceInternals {
  db: Db;
  events: EventBus;
  models: Models;
}

const internals = new WeakMap<ChatService, ServiceInternals>();

/** For chatsvc's own modules (tests, benchmarks) that need the database handle. */
export function internalsOf(service: ChatService): ServiceInternals {
  const found = internals.get(service);
  if (!found) throw new Error("chatsvc: not a service created by createChatService()");
  return found;
}

/**
 * Opens (or creates) a chatsvc database and returns the service.
 *
 * @example
 * const service = createChatService({ db: "./data/chatsvc.db" });
 * const bots = service.chatbots.list();
 * await service.close();
 */
export function createChatService(options: ChatServiceOptions = {}): ChatService {
  const config = resolveConfig(options);
  const db = openDatabase(config.db, { busyTimeoutMs: config.busyTimeoutMs });
  const sqlite = db.$client;
  const events = createEventBus();
  const orgs = createOrgs(db, config);
  const users = createUsers(db);
  const keys = createKeys(db);

  const brandRemovalOf = sqlite.prepare<[number], { brand_removal: number }>("SELECT brand_removal FROM organizations WHERE id = ?");
  const branding = (organizationId: number): Branding => ({
    required: !(brandRemovalOf.get(organizationId)?.brand_removal === 1),
    text: config.branding.text,
    url: config.branding.url,
    icon_url: config.branding.iconUrl,
  });
  // The knowledge base needs chatbots to resolve slugs and chatbots ask it whether a bot has knowledge.
  let knowledge: Knowledge | undefined;
  const chatbots = createChatbots(db, { branding, hasKnowledge: (id) => knowledge!.hasKnowledge(id) });
  knowledge = createKnowledge(db, config, chatbots);
  const models = createModels(config);
  const webhooks = createWebhookRuntime(db, events, config);
  const messages = createMessages(db, config, branding);
  const conversations = createConversations(db, { chatbots, messages, events });
  const credits = createCredits(db);
  const leads = createLeads(db, { chatbots, conversations, messages, events });
  const renderer = createRenderer({ inThread: !config.renderWorker });
  const chat = createChat(db, { config, chatbots, conversations, messages, credits, knowledge, models, events, renderer });
  const widgetBudgets = createWidgetBudgets(db, createWidgetBudgetStore(db), { config, events });
  // A running request holds its key as long as a send can take, and a minute more.
  const idempotency = createIdempotency(createIdempotencyStore(db), { leaseMs: config.modelTimeoutMs + 60_000 });
  const health = createHealthCheck(createWriteProbe(sqlite));

  let closed = false;
  const service: ChatService = {
    config,
    orgs,
    users,
    keys,
    chatbots,
    knowledge,
    webhooks: webhooks.registry,
    widgetBudgets,
    idempotency,
    conversations,
    chat,
    leads,
    credits,
    branding,
    isEmpty: () => sqlite.prepare("SELECT 1 FROM organizations LIMIT 1").get() === undefined,
    health: () => (closed ? { ok: false, reason: "The service is closed" } : health()),
    bootstrap: (opts) => bootstrap(service, opts),
    on: (name, listener) => events.on(name, listener),
    async close() {
      if (closed) return;
      closed = true;
      await webhooks.close();
      await renderer.close();
      keys.flush();
      knowledge.close();
      sqlite.close();
    },
  };
  internals.set(service, { db, events, models });
  return service;
}
