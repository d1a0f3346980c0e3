import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { createAnalytics, type Analytics } from "./analytics/index.js";
import { questionKey } from "./analytics/questions.js";
import { createChat, type Chat } from "./chat/chat.js";
import { createCorrectionAnswers } from "./chat/corrections.js";
import { bootstrap, bootstrapIfEmpty, type BootstrapOptions, type BootstrapResult } from "./bootstrap.js";
import type { Branding } from "./core/branding.js";
import { createChatbots, type Chatbots } from "./core/chatbots.js";
import { collectGarbage } from "./core/collect-garbage.js";
import { resolveConfig, type ChatServiceOptions, type ResolvedConfig } from "./core/config.js";
import { createConsoleSessions, type ConsoleSessions } from "./core/console-sessions.js";
import { createConversations, type Conversations } from "./core/conversations.js";
import { createCorrections, type Corrections } from "./core/corrections.js";
import { createCredits, type Credits } from "./core/credits.js";
import { createExports, type Exports } from "./core/exports.js";
import { createEventBus, type EventBus, type EventListener, type EventName } from "./core/events.js";
import { createHealthCheck, type Health } from "./core/health.js";
import { createKeys, type Keys } from "./core/keys.js";
import { createLeads, type Leads } from "./core/leads.js";
import { createMessages } from "./core/messages.js";
import { createOrgs, type Orgs } from "./core/orgs.js";
import { createPrivacy, type Privacy } from "./core/privacy.js";
import { createRetention, type Retention } from "./core/retention.js";
import type { ExposedFile, RateLimitStore, Storage, StorageOptions } from "./core/storage/index.js";
import { createUsers, type Users } from "./core/users.js";
import { createIdempotency, type Idempotency } from "./core/idempotency.js";
import { createWidgetBudgets, type WidgetBudgets } from "./core/widget-budgets.js";
import { createKnowledge } from "./knowledge/index.js";
import { createSearchThread, type HybridSearch, type SearchThread, type TextHits, type SearchWorkerSetup, type VectorLoad } from "./knowledge/search-thread.js";
import { scheduleSync } from "./knowledge/sync-schedule.js";
import { hasQuestionWords } from "./knowledge/question-match.js";
import type { Knowledge } from "./knowledge/types.js";
import { createModels, type Models } from "./models/registry.js";
import { createRenderer } from "./render/render.js";
import { openSqliteStorage } from "./storage/sqlite/index.js";
import { createWebhookRuntime, encodeWebhookEvent, type WebhookRegistry } from "./webhooks/index.js";

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
  /** Each chatbot's answer corrections: questions answered with a stored answer instead of the model. */
  readonly corrections: Corrections;
  /** Monthly credits per organisation. */
  readonly credits: Credits;
  /** Reports: counts per day or week, unanswered questions, cited documents. */
  readonly analytics: Analytics;
  /** Conversation and lead exports (JSONL, CSV), streamed page by page. */
  readonly exports: Exports;
  /** Visitor erasure and the audit log of erasures and retention passes. */
  readonly privacy: Privacy;
  /** Per-organisation retention: one pass on demand, or a daily schedule (`start`) one instance at a time. */
  readonly retention: Retention;
  /** Outbound webhooks of each organisation: register, list, delete. */
  readonly webhooks: WebhookRegistry;
  /** Each chatbot's widget message budgets: settings and counting. */
  readonly widgetBudgets: WidgetBudgets;
  /** `Idempotency-Key` records of each organisation (the HTTP API uses them). */
  readonly idempotency: Idempotency;
  /** Operator console sign-in: one-time links, API-key sign-in, sessions. */
  readonly consoleSessions: ConsoleSessions;
  /** Rate-limit buckets every instance on the database shares; undefined when this process keeps its own. */
  readonly sharedRateLimits: RateLimitStore | undefined;
  /** The `branding` object for an organisation's chatbots. */
  branding(organizationId: number): Promise<Branding>;
  /** True when the database has no organisation yet (first run). */
  isEmpty(): Promise<boolean>;
  /**
   * Whether this instance can serve: open, and its database takes writes (a small
   * write, probed at most once a second; calls in between answer from the last probe).
   */
  health(): Promise<Health>;
  /** Database files that group or others may read or write (SQLite), for operators to fix. */
  exposedFiles(): ExposedFile[];
  /**
   * Gives back memory a quiet service can do without, keeping everything loaded
   * that a reply needs (the render worker stays warm): collects garbage in this
   * thread and the render worker, and drops the database's caches and memory
   * map. `chatsvc serve` calls it when no request has come for a while.
   */
  releaseMemory(): void;
  /**
   * A random 32-byte secret of this install named `name` (e.g. the widget's
   * token signing key), created on first use. Kept in the database, so it
   * survives restarts and every process or instance sharing the database agrees on it.
   */
  installSecret(name: string): Promise<Buffer>;
  /** First-run setup: an organisation, its owner, the `demo` chatbot and one API key. */
  bootstrap(options?: BootstrapOptions): Promise<BootstrapResult>;
  /**
   * First-run setup unless the database already has an organisation (then undefined).
   * Instances starting together on one empty database set it up once: the others wait
   * for it and answer undefined.
   */
  bootstrapIfEmpty(options?: BootstrapOptions): Promise<BootstrapResult | undefined>;
  /** Listen to domain events after they are committed. Returns an unsubscribe function. */
  on<N extends EventName>(name: N | "*", listener: EventListener<N>): () => void;
  /** Flushes pending writes and closes the database. Safe to call twice. */
  close(): Promise<void>;
}

/** Internals shared by the service's parts; not part of the public API. */
export interface ServiceInternals {
  storage: Storage;
  events: EventBus;
  models: Models;
  /** Where searches run when `searchThread` is on (SQLite files). */
  searchThread?: SearchThread;
}

const internals = new WeakMap<ChatService, ServiceInternals>();

/** For chatsvc's own modules (tests, benchmarks) that need the storage. */
export function internalsOf(service: ChatService): ServiceInternals {
  const found = internals.get(service);
  if (!found) throw new Error("chatsvc: not a service created by createChatService()");
  return found;
}

/** What a model embedder needs of the configuration, and nothing else: it is copied to the search thread. */
function pickEmbedderSettings({ ollamaHost, openaiBaseUrl, openaiApiKey, modelTimeoutMs }: ResolvedConfig): SearchWorkerSetup["embedder"] {
  return { ollamaHost, openaiBaseUrl, openaiApiKey, modelTimeoutMs };
}

/**
 * Opens the configured database. The engine is chosen here and nowhere else:
 * a `database: "postgres://…"` URL selects the PostgreSQL engine (loaded on
 * demand, so SQLite users never load `pg`); otherwise the SQLite file `db`.
 */
async function openStorage(config: ResolvedConfig, options: StorageOptions): Promise<Storage> {
  if (config.database === null) return openSqliteStorage(config.db, options);
  const { openPostgresStorage } = await import("./storage/postgres/index.js");
  return openPostgresStorage(config.database, { ...options, poolSize: config.databasePoolSize });
}

/**
 * Opens (or creates) a chatsvc database and returns the service.
 *
 * @example
 * const service = await createChatService({ db: "./data/chatsvc.db" });
 * const bots = await service.chatbots.list();
 * await service.close();
 */
export async function createChatService(options: ChatServiceOptions = {}): Promise<ChatService> {
  const config = resolveConfig(options);
  const storage = await openStorage(config, { encodeEvent: encodeWebhookEvent, busyTimeoutMs: config.busyTimeoutMs, questionKey });
  const events = createEventBus();
  const orgs = createOrgs(storage.orgs, config);
  const users = createUsers(storage.users);
  const keys = createKeys(storage.keys, storage.changes);

  const branding = async (organizationId: number): Promise<Branding> => ({
    required: !(await storage.orgs.brandRemoval(organizationId)),
    text: config.branding.text,
    url: config.branding.url,
    icon_url: config.branding.iconUrl,
  });
  const chatbots = createChatbots(storage.chatbots, { branding, hasKnowledge: (id) => storage.knowledge.hasChunks(id), changes: storage.changes });
  let searchThread: SearchThread | undefined;
  const { stopPreloads, ...knowledge } = createKnowledge(storage, config, chatbots, {
    ...(config.searchThread &&
      config.database === null &&
      config.db !== ":memory:" && {
        searchIn: (here: { search: HybridSearch; load: VectorLoad }, textHits: TextHits) => {
          const setup = { file: resolve(config.db), busyTimeoutMs: config.busyTimeoutMs, embedModel: config.embedModel, embedder: pickEmbedderSettings(config) };
          searchThread = createSearchThread(setup, { inThread: here.search, loadInThread: here.load, textHits, onFailure: (error) => console.error(error.message) });
          return searchThread;
        },
      }),
  });
  const models = createModels(config);
  const webhooks = createWebhookRuntime(storage, events, config);
  const messages = createMessages(storage.conversations, config, branding);
  const conversations = createConversations(storage.conversations, { chatbots, messages, events });
  const credits = createCredits(storage.credits);
  const analytics = createAnalytics(storage.analytics, chatbots);
  const leads = createLeads(storage.leads, { chatbots, conversations, messages, events });
  const renderer = createRenderer({ inThread: !config.renderWorker });
  const corrections = createCorrections(storage.corrections, { chatbots, conversations, matchable: hasQuestionWords, render: (markdown) => renderer.render(markdown) });
  const chat = createChat({
    config,
    store: storage.conversations,
    chatbots,
    conversations,
    messages,
    credits,
    knowledge,
    models,
    events,
    renderer,
    corrections: createCorrectionAnswers(storage.corrections, knowledge),
  });
  const widgetBudgets = createWidgetBudgets(storage.widgetBudgets, { config, events, record: (event) => storage.outbox.record(event) });
  // A running request holds its key as long as a send can take, and a minute more.
  const idempotency = createIdempotency(storage.idempotency, { leaseMs: config.modelTimeoutMs + 60_000 });
  const consoleSessions = createConsoleSessions(storage.consoleSessions, { users, keys });
  const health = createHealthCheck(() => storage.probeWrite());
  const syncing = config.syncEveryMs === null ? undefined : scheduleSync(knowledge, config.syncEveryMs);
  const exports = createExports(storage, chatbots);
  const privacy = createPrivacy(storage.privacy);
  const retention = createRetention(storage);

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
    consoleSessions,
    sharedRateLimits: storage.rateLimits,
    conversations,
    chat,
    leads,
    corrections,
    credits,
    analytics,
    exports,
    privacy,
    retention,
    branding,
    isEmpty: async () => !(await storage.orgs.any()),
    health: async () => (closed ? { ok: false, reason: "The service is closed" } : health()),
    exposedFiles: () => storage.exposedFiles(),
    releaseMemory() {
      if (closed) return;
      renderer.releaseMemory();
      searchThread?.releaseMemory();
      storage.releaseMemory();
      collectGarbage();
    },
    installSecret: async (name) => Buffer.from(await storage.settings.putIfAbsent(name, randomBytes(32).toString("base64")), "base64"),
    bootstrap: (opts) => bootstrap(service, opts),
    bootstrapIfEmpty: (opts) => bootstrapIfEmpty({ ...service, settings: storage.settings }, opts),
    on: (name, listener) => events.on(name, listener),
    async close() {
      if (closed) return;
      closed = true;
      await syncing?.stop();
      await retention.stop();
      await webhooks.close();
      await renderer.close();
      // The search thread stops its own loads ahead; those in this thread stop here, before the storage closes.
      const preloadsStopped = stopPreloads();
      await searchThread?.close();
      await preloadsStopped;
      await keys.flush();
      await storage.close();
    },
  };
  internals.set(service, { storage, events, models, ...(searchThread && { searchThread }) });
  return service;
}
