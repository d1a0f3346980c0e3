import proxyaddr from "proxy-addr";
import { parseDuration } from "./duration.js";
import { ChatsvcError, type FieldErrors } from "./errors.js";

/** Attribution shown in replies while an organisation has no brand removal. */
export interface BrandingOptions {
  text?: string;
  url?: string;
  iconUrl?: string;
}

export interface WebhookOptions {
  /** Deliver to private, loopback and other non-public addresses (tests, intranets). Default false. */
  allowPrivateNetworks?: boolean;
  /** Delays before each retry, in milliseconds. Default `[1000, 5000, 25000]`. */
  retryDelaysMs?: number[];
  /**
   * Per-attempt timeout (env `CHATSVC_WEBHOOK_TIMEOUT_MS`). Default 10 000 ms. An attempt's outbox row is
   * leased for this long plus a second, so it is also how soon another instance takes over the rows of one that died.
   */
  timeoutMs?: number;
  /** Deliveries in flight at once. Default 8. */
  concurrency?: number;
}

/** Fetching URLs given to `ingest`. */
export interface IngestOptions {
  /** Fetch from private, loopback and other non-public addresses (intranets, tests; env `CHATSVC_INGEST_ALLOW_PRIVATE`). Default false. */
  allowPrivateNetworks?: boolean;
  /** Limit for fetching one URL: redirects, headers and body. Default 15 000 ms. */
  timeoutMs?: number;
  /**
   * Pages ingested at most from one sitemap URL, nested sitemaps of a sitemap index included; the rest are
   * reported as skipped (env `CHATSVC_INGEST_SITEMAP_MAX_PAGES`). Default 1000.
   */
  sitemapMaxPages?: number;
}

export interface WidgetOptions {
  /** Widget requests per minute from one IP address, in bursts of up to as many (env `CHATSVC_WIDGET_IP_RATE`). Default 120. */
  ipRatePerMinute?: number;
  /** Widget requests per minute for one visitor's conversation (env `CHATSVC_WIDGET_VISITOR_RATE`). Default 30. */
  visitorRatePerMinute?: number;
  /** Lifetime of a visitor's conversation token, in seconds. Default 43 200 (12 hours). */
  tokenTtlSeconds?: number;
  /** Widget messages one visitor (client IP) may send a chatbot per UTC day; 0 for no limit (env `CHATSVC_WIDGET_VISITOR_DAILY`). Default 50. */
  visitorMessagesPerDay?: number;
  /** Widget messages a chatbot answers per UTC hour, all visitors together; 0 for no limit (env `CHATSVC_WIDGET_CHATBOT_HOURLY`). Default 200. */
  chatbotMessagesPerHour?: number;
  /** Widget messages a chatbot answers per UTC day, all visitors together; 0 for no limit (env `CHATSVC_WIDGET_CHATBOT_DAILY`). Default 1000. */
  chatbotMessagesPerDay?: number;
}

/** Limits of the REST API, each in requests per minute, in bursts of up to as many; 0 turns one off. */
export interface RateLimitOptions {
  /** Requests with one API key (env `CHATSVC_RATE_LIMIT_PER_KEY`). Default 300. */
  perKeyPerMinute?: number;
  /** Requests from one client IP, with or without a key (env `CHATSVC_RATE_LIMIT_PER_IP`). Default 600. */
  perIpPerMinute?: number;
  /**
   * Failed authentications from one client IP, and as many again with one presented key prefix (`sk_live_` + 7)
   * from anywhere; when either is spent, further failures get 429 instead of 401 until it refills. A key that
   * verifies is never refused by it (env `CHATSVC_RATE_LIMIT_FAILED_AUTH`). Default 30.
   */
  failedAuthPerIpPerMinute?: number;
}

/** How much the HTTP layer logs: `debug` adds health checks, `info` every request, `warn` and `error` only failures. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];

export interface RetrievalOptions {
  /** Chunks handed to the model. Default 6. */
  k?: number;
  /** Minimum relevance (0..1) for a chunk to count; below it the bot cannot answer. Default 0.2. */
  threshold?: number;
}

export interface ChunkingOptions {
  /** Target chunk size in characters. Default 1000. */
  size?: number;
  /** Characters repeated between neighbouring chunks. Default 150. */
  overlap?: number;
}

/**
 * Options of {@link createChatService}. Every option can also come from the
 * environment (`CHATSVC_*`, `OLLAMA_HOST`, `OPENAI_*`); explicit options win.
 */
export interface ChatServiceOptions {
  /** SQLite file. Default `./.chatsvc/chatsvc.db` (env `CHATSVC_DB`); `:memory:` works for tests. */
  db?: string;
  /**
   * A PostgreSQL URL, `postgres://user:password@host:5432/name` (env `CHATSVC_DATABASE_URL`): the service
   * then keeps everything in that database instead of the SQLite file, and several instances may share it.
   */
  database?: string;
  /**
   * Connections each instance keeps to PostgreSQL for queries (env `CHATSVC_DATABASE_POOL_SIZE`), besides
   * one listening for other instances' webhook wake-ups. Default 10; at least 2. Size the server's
   * `max_connections` for instances × (this + 1) plus what your tools use.
   */
  databasePoolSize?: number;
  /** Default chat model: `extractive`, `ollama:<model>` or `openai:<model>` (env `CHATSVC_CHAT_MODEL`). */
  chatModel?: string;
  /** Embedder: `hash`, `ollama:<model>` or `openai:<model>` (env `CHATSVC_EMBED_MODEL`). */
  embedModel?: string;
  /** Ollama server (env `OLLAMA_HOST`). Default `http://127.0.0.1:11434`. */
  ollamaHost?: string;
  /** OpenAI-compatible server (env `OPENAI_BASE_URL`, `OPENAI_API_KEY`). Default `https://api.openai.com/v1`. */
  openaiBaseUrl?: string;
  openaiApiKey?: string;
  /** A model call slower than this fails (env `CHATSVC_MODEL_TIMEOUT_MS`). Default 60 000. */
  modelTimeoutMs?: number;
  /** Monthly credits of a new organisation (env `CHATSVC_CREDITS_MONTHLY`). Default 10 000. */
  creditsMonthly?: number;
  /** Credits charged per answered message, by model spec; `default` for the rest. Default 1. */
  creditCosts?: Record<string, number>;
  branding?: BrandingOptions;
  webhooks?: WebhookOptions;
  ingest?: IngestOptions;
  retrieval?: RetrievalOptions;
  chunking?: ChunkingOptions;
  /** The embeddable widget's rate limits and visitor tokens. */
  widget?: WidgetOptions;
  /** The REST API's rate limits, or `false` for none (env `CHATSVC_RATE_LIMIT=off`). */
  rateLimit?: RateLimitOptions | false;
  /** Log level of the HTTP layer's JSON lines (env `CHATSVC_LOG_LEVEL`). Default `info`. */
  logLevel?: LogLevel;
  /**
   * Which proxies in front of the server to believe about the client IP, like Express's `trust proxy`:
   * `true` or `1` trusts the socket's peer (one proxy), a number that many hops, a list the addresses and CIDRs
   * given (`loopback`, `linklocal` and `uniquelocal` name their ranges). The client IP is then the rightmost
   * `X-Forwarded-For` address that is not a trusted proxy (env `CHATSVC_TRUST_PROXY`: `1`, a number, or a
   * comma-separated list). Default false: the socket's peer is the client.
   */
  trustProxy?: boolean | number | string | readonly string[];
  /**
   * Public URL of the server's root, where clients reach `/api/v1` and `/widget.js`, e.g.
   * `https://chat.example.com`, or `https://example.com/chat` behind a proxy that serves it under `/chat`
   * (env `CHATSVC_PUBLIC_URL`). Pagination links are absolute on it (relative without it), and the demo
   * bot's widget works on its origin. Never taken from a request's `Host`, which the client writes.
   */
  publicUrl?: string;
  /** Header carrying the visitor's country code (env `CHATSVC_COUNTRY_HEADER`). Default `cf-ipcountry`. */
  countryHeader?: string;
  /** SQLite busy timeout in milliseconds. Default 5 000. */
  busyTimeoutMs?: number;
  /**
   * Sanitise replies in a worker thread (default true, env `CHATSVC_RENDER_WORKER=0` to turn off).
   * Off, jsdom loads once into this thread and stays: less start-up work per service, no memory bounds.
   */
  renderWorker?: boolean;
  /**
   * Run retrieval in a worker thread with its own read-only connection and vector index, beside the event loop
   * (env `CHATSVC_SEARCH_THREAD`). SQLite database files only (PostgreSQL searches in its own processes).
   * Default false; `chatsvc serve` turns it on.
   */
  searchThread?: boolean;
  /**
   * Re-fetch every chatbot's web documents in the background this often (`kb sync` for all of them): a number
   * of milliseconds or a duration like `24h`, `30m` (env `CHATSVC_SYNC_EVERY`); at least 1 s. Instances sharing
   * a database run one round per period between them. `false`, `0` or `off` for none (the default).
   */
  syncEvery?: number | string | false;
  /** Environment to read; default `process.env`. */
  env?: Record<string, string | undefined>;
}

/** Proxies believed about the client IP: none, a number of hops, or addresses and CIDRs. */
export type TrustProxy = false | number | readonly string[];

/** The validated, complete configuration a service runs with. */
export interface ResolvedConfig {
  db: string;
  /** The PostgreSQL URL, or null for the SQLite file `db`. */
  database: string | null;
  databasePoolSize: number;
  chatModel: string;
  embedModel: string;
  ollamaHost: string;
  openaiBaseUrl: string;
  openaiApiKey: string | undefined;
  modelTimeoutMs: number;
  creditsMonthly: number;
  creditCosts: Record<string, number>;
  branding: Required<BrandingOptions>;
  webhooks: Required<WebhookOptions>;
  ingest: Required<IngestOptions>;
  retrieval: Required<RetrievalOptions>;
  chunking: Required<ChunkingOptions>;
  widget: Required<WidgetOptions>;
  /** 0 means that limit is off. */
  rateLimit: Required<RateLimitOptions>;
  logLevel: LogLevel;
  /** False, a number of trusted hops (at least 1), or the trusted addresses and CIDRs. */
  trustProxy: TrustProxy;
  /** Origin plus optional path prefix, without a trailing slash; undefined when not configured. */
  publicUrl: string | undefined;
  countryHeader: string;
  busyTimeoutMs: number;
  renderWorker: boolean;
  searchThread: boolean;
  /** Milliseconds between background sync rounds; null when off. */
  syncEveryMs: number | null;
}

export const DEFAULT_DB_FILE = "./.chatsvc/chatsvc.db";

const DEFAULT_ICON =
  "data:image/svg+xml;base64," +
  Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="4" fill="#2563eb"/><path d="M4 5h8v5H8l-3 2v-2H4z" fill="#fff"/></svg>',
  ).toString("base64");

const MODEL_SPEC = /^(extractive|hash|(ollama|openai):\S+)$/;

/**
 * Merges options, environment and defaults, and validates the result once.
 * Invalid values throw a 422 {@link ChatsvcError} naming each option.
 */
export function resolveConfig(options: ChatServiceOptions = {}): ResolvedConfig {
  const env = options.env ?? process.env;
  const errors: FieldErrors = {};
  const fail = (field: string, message: string) => (errors[field] ??= []).push(message);

  const int = (field: string, value: number | string | undefined, fallback: number, min: number): number => {
    if (value === undefined || value === "") return fallback;
    const n = typeof value === "number" ? value : Number(value);
    if (!Number.isInteger(n) || n < min) {
      fail(field, `${field} must be an integer of at least ${min}`);
      return fallback;
    }
    return n;
  };
  const bool = (field: string, value: boolean | string | undefined): boolean => {
    if (value === undefined || value === "") return false;
    if (typeof value === "boolean") return value;
    if (/^(1|true|yes|on)$/i.test(value)) return true;
    if (/^(0|false|no|off)$/i.test(value)) return false;
    fail(field, `${field} must be a boolean (1/0, true/false)`);
    return false;
  };
  const spec = (field: string, value: string, allowed: RegExp): string => {
    if (!allowed.test(value)) fail(field, `${field} must be extractive, hash, ollama:<model> or openai:<model>; got "${value}"`);
    return value;
  };

  const chatModel = spec("chatModel", options.chatModel ?? env.CHATSVC_CHAT_MODEL ?? "extractive", MODEL_SPEC);
  if (chatModel === "hash") fail("chatModel", "chatModel cannot be the hash embedder");
  const embedModel = spec("embedModel", options.embedModel ?? env.CHATSVC_EMBED_MODEL ?? "hash", MODEL_SPEC);
  if (embedModel === "extractive") fail("embedModel", "embedModel cannot be the extractive chat model");

  const retryDelaysMs = options.webhooks?.retryDelaysMs ?? parseDelays(env.CHATSVC_WEBHOOK_RETRY_DELAYS, fail);
  if (!Array.isArray(retryDelaysMs) || retryDelaysMs.some((d) => !Number.isInteger(d) || d < 0) || retryDelaysMs.length > 10) {
    fail("webhooks.retryDelaysMs", "webhooks.retryDelaysMs must be at most 10 non-negative integers (milliseconds)");
  }

  const creditCosts = { default: 1, ...options.creditCosts };
  for (const [model, cost] of Object.entries(creditCosts)) {
    if (!Number.isInteger(cost) || cost < 0) fail("creditCosts", `creditCosts.${model} must be a non-negative integer`);
  }

  const threshold = options.retrieval?.threshold ?? 0.2;
  if (typeof threshold !== "number" || !(threshold >= 0 && threshold <= 1)) {
    fail("retrieval.threshold", "retrieval.threshold must be a number from 0 to 1");
  }

  const chunkSize = int("chunking.size", options.chunking?.size, 1000, 100);
  const overlap = int("chunking.overlap", options.chunking?.overlap, 150, 0);
  if (overlap >= chunkSize) fail("chunking.overlap", "chunking.overlap must be smaller than chunking.size");

  const database = options.database ?? (env.CHATSVC_DATABASE_URL || undefined) ?? null;
  if (database !== null && !/^postgres(ql)?:\/\/./i.test(database)) fail("database", "database must be a postgres:// or postgresql:// URL");

  const config: ResolvedConfig = {
    db: options.db ?? env.CHATSVC_DB ?? DEFAULT_DB_FILE,
    database,
    databasePoolSize: int("databasePoolSize", options.databasePoolSize ?? env.CHATSVC_DATABASE_POOL_SIZE, 10, 2),
    chatModel,
    embedModel,
    ollamaHost: options.ollamaHost ?? env.OLLAMA_HOST ?? "http://127.0.0.1:11434",
    openaiBaseUrl: (options.openaiBaseUrl ?? env.OPENAI_BASE_URL ?? "https://api.openai.com/v1").replace(/\/+$/, ""),
    openaiApiKey: options.openaiApiKey ?? env.OPENAI_API_KEY,
    modelTimeoutMs: int("modelTimeoutMs", options.modelTimeoutMs ?? env.CHATSVC_MODEL_TIMEOUT_MS, 60_000, 1),
    creditsMonthly: int("creditsMonthly", options.creditsMonthly ?? env.CHATSVC_CREDITS_MONTHLY, 10_000, 0),
    creditCosts,
    branding: {
      text: options.branding?.text ?? "Powered by chatsvc",
      url: options.branding?.url ?? "https://github.com/chatsvc/chatsvc",
      iconUrl: options.branding?.iconUrl ?? DEFAULT_ICON,
    },
    webhooks: {
      allowPrivateNetworks:
        options.webhooks?.allowPrivateNetworks ?? bool("webhooks.allowPrivateNetworks", env.CHATSVC_WEBHOOKS_ALLOW_PRIVATE),
      retryDelaysMs: Array.isArray(retryDelaysMs) ? retryDelaysMs : [1000, 5000, 25000],
      timeoutMs: int("webhooks.timeoutMs", options.webhooks?.timeoutMs ?? env.CHATSVC_WEBHOOK_TIMEOUT_MS, 10_000, 1),
      concurrency: int("webhooks.concurrency", options.webhooks?.concurrency, 8, 1),
    },
    ingest: {
      allowPrivateNetworks: bool("ingest.allowPrivateNetworks", options.ingest?.allowPrivateNetworks ?? env.CHATSVC_INGEST_ALLOW_PRIVATE),
      timeoutMs: int("ingest.timeoutMs", options.ingest?.timeoutMs, 15_000, 1),
      sitemapMaxPages: int("ingest.sitemapMaxPages", options.ingest?.sitemapMaxPages ?? env.CHATSVC_INGEST_SITEMAP_MAX_PAGES, 1000, 1),
    },
    retrieval: { k: int("retrieval.k", options.retrieval?.k, 6, 1), threshold },
    chunking: { size: chunkSize, overlap },
    widget: {
      ipRatePerMinute: int("widget.ipRatePerMinute", options.widget?.ipRatePerMinute ?? env.CHATSVC_WIDGET_IP_RATE, 120, 1),
      visitorRatePerMinute: int("widget.visitorRatePerMinute", options.widget?.visitorRatePerMinute ?? env.CHATSVC_WIDGET_VISITOR_RATE, 30, 1),
      tokenTtlSeconds: int("widget.tokenTtlSeconds", options.widget?.tokenTtlSeconds, 43_200, 1),
      visitorMessagesPerDay: int("widget.visitorMessagesPerDay", options.widget?.visitorMessagesPerDay ?? env.CHATSVC_WIDGET_VISITOR_DAILY, 50, 0),
      chatbotMessagesPerHour: int("widget.chatbotMessagesPerHour", options.widget?.chatbotMessagesPerHour ?? env.CHATSVC_WIDGET_CHATBOT_HOURLY, 200, 0),
      chatbotMessagesPerDay: int("widget.chatbotMessagesPerDay", options.widget?.chatbotMessagesPerDay ?? env.CHATSVC_WIDGET_CHATBOT_DAILY, 1000, 0),
    },
    rateLimit: rateLimitsOf(options.rateLimit, env, int, bool),
    logLevel: logLevelOf(options.logLevel ?? env.CHATSVC_LOG_LEVEL, fail),
    trustProxy: trustProxyOf(options.trustProxy ?? env.CHATSVC_TRUST_PROXY, fail),
    publicUrl: publicUrlOf(options.publicUrl ?? env.CHATSVC_PUBLIC_URL, fail),
    countryHeader: (options.countryHeader ?? env.CHATSVC_COUNTRY_HEADER ?? "cf-ipcountry").toLowerCase(),
    busyTimeoutMs: int("busyTimeoutMs", options.busyTimeoutMs, 5_000, 0),
    renderWorker: options.renderWorker ?? (env.CHATSVC_RENDER_WORKER === undefined || env.CHATSVC_RENDER_WORKER === "" ? true : bool("renderWorker", env.CHATSVC_RENDER_WORKER)),
    searchThread: options.searchThread ?? bool("searchThread", env.CHATSVC_SEARCH_THREAD),
    syncEveryMs: syncEveryOf(options.syncEvery ?? env.CHATSVC_SYNC_EVERY, fail),
  };
  if (Object.keys(errors).length > 0) throw ChatsvcError.validation(errors, "Invalid chatsvc configuration");
  return config;
}

function rateLimitsOf(
  options: RateLimitOptions | false | undefined,
  env: Record<string, string | undefined>,
  int: (field: string, value: number | string | undefined, fallback: number, min: number) => number,
  bool: (field: string, value: boolean | string | undefined) => boolean,
): Required<RateLimitOptions> {
  // `CHATSVC_RATE_LIMIT=off` reads as false, `on` (or unset) keeps the limits.
  const enabled = options !== false && (env.CHATSVC_RATE_LIMIT === undefined || bool("rateLimit", env.CHATSVC_RATE_LIMIT));
  if (!enabled) return { perKeyPerMinute: 0, perIpPerMinute: 0, failedAuthPerIpPerMinute: 0 };
  return {
    perKeyPerMinute: int("rateLimit.perKeyPerMinute", options?.perKeyPerMinute ?? env.CHATSVC_RATE_LIMIT_PER_KEY, 300, 0),
    perIpPerMinute: int("rateLimit.perIpPerMinute", options?.perIpPerMinute ?? env.CHATSVC_RATE_LIMIT_PER_IP, 600, 0),
    failedAuthPerIpPerMinute: int("rateLimit.failedAuthPerIpPerMinute", options?.failedAuthPerIpPerMinute ?? env.CHATSVC_RATE_LIMIT_FAILED_AUTH, 30, 0),
  };
}

function syncEveryOf(value: number | string | false | undefined, fail: (field: string, message: string) => void): number | null {
  if (value === undefined || value === false || value === 0 || (typeof value === "string" && /^\s*(0|off|)\s*$/i.test(value))) return null;
  const ms = parseDuration(value);
  if (ms !== undefined && ms >= 1_000) return ms;
  fail("syncEvery", `syncEvery must be a duration of at least 1 s, like 24h, 30m or 90s (or off); got "${value}"`);
  return null;
}

function logLevelOf(value: string | undefined, fail: (field: string, message: string) => void): LogLevel {
  if (value === undefined || value === "") return "info";
  const level = value.trim().toLowerCase() as LogLevel;
  if (LOG_LEVELS.includes(level)) return level;
  fail("logLevel", `logLevel must be one of ${LOG_LEVELS.join(", ")}; got "${value}"`);
  return "info";
}

function trustProxyOf(value: boolean | number | string | readonly string[] | undefined, fail: (field: string, message: string) => void): TrustProxy {
  const invalid = (why: string): TrustProxy => {
    fail("trustProxy", `trustProxy must be true, a number of hops, or addresses and CIDRs (or loopback, linklocal, uniquelocal); ${why}`);
    return false;
  };
  if (value === undefined || value === false) return false;
  if (value === true) return 1;
  if (typeof value === "number") return Number.isInteger(value) && value >= 0 ? value || false : invalid(`got ${value}`);
  if (typeof value === "string") {
    const text = value.trim();
    if (/^(true|yes|on)$/i.test(text)) return 1;
    if (text === "" || /^(false|no|off)$/i.test(text)) return false;
    if (/^\d+$/.test(text)) return Number(text) || false;
    return trustProxyOf(text.split(","), fail);
  }
  if (!Array.isArray(value) || value.some((entry) => typeof entry !== "string")) return invalid("got neither of these");
  const list = value.map((entry) => entry.trim()).filter((entry) => entry !== "");
  if (list.length === 0) return false;
  try {
    // Compiling is the validation: the same parser then decides at request time.
    proxyaddr.compile(list);
  } catch (error) {
    return invalid((error as Error).message);
  }
  return list;
}

function publicUrlOf(value: string | undefined, fail: (field: string, message: string) => void): string | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const url = URL.canParse(value.trim()) ? new URL(value.trim()) : undefined;
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash) {
    fail("publicUrl", `publicUrl must be an http(s) URL of the server's root with no credentials, query or fragment, e.g. https://chat.example.com or https://example.com/chat; got "${value}"`);
    return undefined;
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

function parseDelays(raw: string | undefined, fail: (field: string, message: string) => void): number[] {
  if (raw === undefined || raw.trim() === "") return [1000, 5000, 25000];
  const parts = raw.split(",").map((s) => s.trim());
  if (parts.some((p) => !/^\d+$/.test(p))) {
    fail("webhooks.retryDelaysMs", "CHATSVC_WEBHOOK_RETRY_DELAYS must be comma-separated milliseconds, e.g. 1000,5000,25000");
    return [1000, 5000, 25000];
  }
  return parts.map(Number);
}

/** Credits one answered message costs with the given model spec. */
export function creditCost(config: ResolvedConfig, model: string): number {
  return config.creditCosts[model] ?? config.creditCosts.default ?? 1;
}
