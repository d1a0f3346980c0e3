import { createFetch, type FetchResponse } from "ofetch";
import type {
  AnalyticsOverview,
  AnalyticsQuery,
  AccountInfo,
  AuditEntry,
  ConversationExportLine,
  DeletedCounts,
  EraseVisitorInput,
  ExportQuery,
  CapturedLead,
  ChatbotDetail,
  ChatbotListItem,
  ConversationDetail,
  ConversationHistory,
  ConversationListQuery,
  ConversationRecord,
  CorrectionInput,
  CorrectionUpdateInput,
  CorrectMessageInput,
  Correction,
  CreditMeta,
  EndedConversation,
  Lead,
  LeadDetail,
  LeadInput,
  LeadUpdateInput,
  ListedWebhook,
  Message,
  PageQuery,
  PostMessageInput,
  RegisteredWebhookData,
  RegisterWebhookInput,
  WebhookTestData,
  ReplyData,
  HumanHandledData,
  HandoffInput,
  HandoffRequested,
  StartConversationInput,
  StartedConversation,
  WidgetBudget,
  WidgetBudgetInput,
  QuestionGroup,
  SourceStats,
  SourcesQuery,
  UnansweredQuery,
} from "./api-types.js";
import { ChatsvcError } from "./error.js";
import { readServerSentEvents } from "./sse.js";
import type { IdempotentOptions, Ok, OkWithMeta, PageOf, ReplyStreamEvent, RequestOptions } from "./types.js";

export type * from "./api-types.js";
export { ChatsvcError } from "./error.js";
export type { IdempotentOptions, Ok, OkWithMeta, PageOf, ReplyStreamEvent, RequestOptions } from "./types.js";
export { readServerSentEvents, type ServerSentEvent } from "./sse.js";

export interface ClientOptions {
  /** The API root, `/api/v1` included, e.g. `http://127.0.0.1:3000/api/v1`. */
  baseUrl: string;
  /** An API key (`sk_live_...`). Keep it on your server. */
  apiKey: string;
  /** The fetch to use. Default: the global one. */
  fetch?: typeof globalThis.fetch;
  /** Wait before the one retry after a 500, in ms. Default 500. */
  retryDelayMs?: number;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

type Method = "GET" | "POST" | "PUT" | "DELETE";
interface CallInit extends IdempotentOptions {
  body?: unknown;
  query?: object;
}

const idempotencyHeader = (key: string | undefined) => (key === undefined ? undefined : { "idempotency-key": key });

/**
 * A typed client of the chatsvc API: one method per endpoint, resolving to
 * the answer's envelope (`{success, data, meta?, links?}`) and throwing a
 * {@link ChatsvcError} (status, message, field `errors`, details) otherwise.
 *
 * A 500 is retried once, for every method: the service stores nothing when it
 * answers 500 (a failed send charges no credits and saves no message), so the
 * retry cannot duplicate anything. Network failures are not retried, as the
 * service may have acted on a request whose answer was lost: give the calls
 * that create or charge an `idempotencyKey` and retry them yourself with it.
 *
 * @example
 * import { createClient } from "chatsvc/client";
 * const chatsvc = createClient({ baseUrl: "http://127.0.0.1:3000/api/v1", apiKey: process.env.CHATSVC_API_KEY! });
 * const { data: conversation } = await chatsvc.chatbots.startConversation("demo", { visitor_id: "v-42" });
 * const { data: reply } = await chatsvc.chatbots.send("demo", conversation.conversation_id, "How do I install chatsvc?");
 * console.log(reply.reply); // HTML: render it unmodified
 */
export function createClient({ baseUrl, apiKey, fetch, retryDelayMs = 500, headers = {} }: ClientOptions) {
  const $fetch = createFetch({
    ...(fetch && { fetch }),
    defaults: {
      baseURL: baseUrl.replace(/\/+$/, ""),
      headers: { ...headers, authorization: `Bearer ${apiKey}` },
      retry: false,
      ignoreResponseError: true,
    },
  });

  /** Sends a request, retrying once after a 500; `send` makes the actual attempt. */
  const withRetry = async <R extends Response>(send: () => Promise<R>, signal: AbortSignal | undefined, consume: (res: R) => Promise<unknown>): Promise<R> => {
    const first = await send();
    if (first.status !== 500) return first;
    await consume(first);
    await delay(retryDelayMs, signal);
    return send();
  };

  const call = async <T>(method: Method, path: string, { body, query, signal, idempotencyKey }: CallInit = {}): Promise<T> => {
    const headers = idempotencyHeader(idempotencyKey);
    const res = await withRetry(
      () =>
        $fetch.raw(path, {
          method,
          ...(body !== undefined && { body: body as Record<string, unknown> }),
          ...(query && { query: definedOnly(query) }),
          ...(headers && { headers }),
          signal,
        }),
      signal,
      async () => {},
    );
    if (res.ok) return res._data as T;
    throw toChatsvcError(res, res._data);
  };

  /**
   * Sends a visitor message asking for Server-Sent Events and yields the
   * reply's text as it is written, then the complete answer.
   */
  async function* stream(slug: string, conversationId: number, message: string, { signal, idempotencyKey }: IdempotentOptions = {}): AsyncGenerator<ReplyStreamEvent, void, undefined> {
    const res = await withRetry(
      () =>
        $fetch.raw(chatbotPath(slug, conversationId, "/messages/stream"), {
          method: "POST",
          body: { message },
          headers: { accept: "text/event-stream", ...idempotencyHeader(idempotencyKey) },
          responseType: "stream",
          signal,
        }),
      signal,
      (failed) => failed.body?.cancel() ?? Promise.resolve(),
    );
    if (res.ok && res.headers.get("idempotency-replayed") === "true") {
      // A replay is the stored JSON envelope of the first answer, not a stream.
      const done = (await readJson(res)) as OkWithMeta<ReplyData | HumanHandledData, CreditMeta>;
      yield { type: "done", data: done.data, meta: done.meta };
      return;
    }
    if (!res.ok || !res.body || !/^text\/event-stream\b/i.test(res.headers.get("content-type") ?? "")) {
      throw toChatsvcError(res, await readJson(res));
    }
    for await (const { event, data } of readServerSentEvents(res.body)) {
      const payload = JSON.parse(data) as Record<string, unknown>;
      if (event === "delta") yield { type: "delta", text: String(payload.text ?? "") };
      else if (event === "done") {
        const done = payload as unknown as OkWithMeta<ReplyData | HumanHandledData, CreditMeta>;
        yield { type: "done", data: done.data, meta: done.meta };
        return;
      } else if (event === "error") {
        // The status line was sent before the failure: the envelope is all there is, and failures mid-answer are the provider's.
        throw toChatsvcError({ status: 500, statusText: "Internal Server Error", headers: res.headers }, payload);
      }
    }
    throw new ChatsvcError(500, "The reply stream ended before the answer was complete");
  }

  /** Starts an export; resolves once the server accepted it (else throws), with the body still to be read. */
  const download = async (path: string, query: ExportQuery, { signal }: RequestOptions = {}): Promise<Response> => {
    const res = await withRetry(
      () => $fetch.raw(path, { method: "GET", query: definedOnly(query), responseType: "stream", signal }),
      signal,
      (failed) => failed.body?.cancel() ?? Promise.resolve(),
    );
    if (!res.ok || !res.body) throw toChatsvcError(res, await readJson(res));
    return res;
  };

  /** The records of a JSONL export, parsed one line at a time as the body arrives. */
  async function* records<T>(path: string, query: Omit<ExportQuery, "format">, options?: RequestOptions): AsyncGenerator<T, void, undefined> {
    const res = await download(path, { ...query, format: "jsonl" }, options);
    let buffered = "";
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (let next = await reader.read(); !next.done; next = await reader.read()) {
        buffered += next.value;
        const lines = buffered.split("\n");
        buffered = lines.pop()!;
        for (const line of lines) if (line !== "") yield JSON.parse(line) as T;
      }
    } finally {
      // A consumer that stops early (break) closes the connection, and the server stops reading.
      await reader.cancel().catch(() => {});
    }
    // The server ends every record with a newline: a rest means the stream was cut off.
    if (buffered !== "") throw new ChatsvcError(500, "The export ended in the middle of a record");
  }

  const chatbotPath = (slug: string, conversationId?: number, rest = "") =>
    `/chatbots/${encodeURIComponent(slug)}${conversationId === undefined ? "" : `/conversations/${idSegment(conversationId)}`}${rest}`;

  return {
    auth: {
      /** Checks the key: the account it belongs to. */
      test: (options?: RequestOptions) => call<Ok<AccountInfo>>("GET", "/auth/test", options),
    },
    chatbots: {
      /** The organisation's active chatbots; `meta.total` counts them. */
      list: (options?: RequestOptions) => call<OkWithMeta<ChatbotListItem[], { total: number }>>("GET", "/chatbots", options),
      /** A chatbot's configuration: read it once at start. */
      get: (slug: string, options?: RequestOptions) => call<Ok<ChatbotDetail>>("GET", chatbotPath(slug), options),
      /** Opens a conversation; keep `conversation_id`. */
      startConversation: (slug: string, visitor: StartConversationInput = {}, options?: IdempotentOptions) =>
        call<Ok<StartedConversation>>("POST", `${chatbotPath(slug)}/conversations`, { ...options, body: visitor }),
      /**
       * Sends a visitor message; `data.reply` is HTML to render unmodified, `meta` the credits left.
       * While a person handles the conversation `data.reply` is null (`handled_by: "human"`): show their `agent` replies from history.
       */
      send: (slug: string, conversationId: number, message: string, options?: IdempotentOptions) =>
        call<OkWithMeta<ReplyData | HumanHandledData, CreditMeta>>("POST", chatbotPath(slug, conversationId, "/messages"), { ...options, body: { message } }),
      stream,
      /** Rates an assistant message; rating it again replaces the rating. */
      rate: (slug: string, conversationId: number, messageId: number, rating: "good" | "bad", options?: RequestOptions) =>
        call<Ok<{ message_id: number; rating: "good" | "bad" }>>("POST", chatbotPath(slug, conversationId, "/messages/rate"), {
          ...options,
          body: { message_id: messageId, rating },
        }),
      /** Replaces the latest assistant reply with a new answer. */
      regenerate: (slug: string, conversationId: number, messageId: number, options?: IdempotentOptions) =>
        call<OkWithMeta<ReplyData, CreditMeta>>("POST", chatbotPath(slug, conversationId, `/messages/${idSegment(messageId)}/regenerate`), options),
      /** The conversation's history (user text is plain: escape it; assistant content is HTML). */
      history: (slug: string, conversationId: number, options?: RequestOptions) => call<Ok<ConversationHistory>>("GET", chatbotPath(slug, conversationId), options),
      /** Ends the conversation; repeating it is safe. */
      end: (slug: string, conversationId: number, options?: RequestOptions) => call<Ok<EndedConversation>>("POST", chatbotPath(slug, conversationId, "/end"), options),
      /** The chatbot's widget message budgets: limits in force and its own settings. */
      widgetBudget: (slug: string, options?: RequestOptions) => call<Ok<WidgetBudget>>("GET", chatbotPath(slug, undefined, "/widget-budget"), options),
      /** Sets widget budgets: a number (0 for no limit) or null for the server's default; fields left out stay. */
      setWidgetBudget: (slug: string, input: WidgetBudgetInput, options?: RequestOptions) =>
        call<Ok<WidgetBudget>>("PUT", chatbotPath(slug, undefined, "/widget-budget"), { ...options, body: input }),
      /** The visitor asks for a person: the bot stops answering; fires `handoff_requested` (once per handoff). */
      requestHandoff: (slug: string, conversationId: number, input: HandoffInput = {}, options?: RequestOptions) =>
        call<Ok<HandoffRequested>>("POST", chatbotPath(slug, conversationId, "/handoff"), { ...options, body: input }),
      /** Stores the visitor's contact details (at least one of name, email, phone). */
      submitLead: (slug: string, conversationId: number, lead: LeadInput, options?: IdempotentOptions) =>
        call<Ok<CapturedLead>>("POST", chatbotPath(slug, conversationId, "/leads"), { ...options, body: lead }),
    },
    conversations: {
      list: (query: ConversationListQuery = {}, options?: RequestOptions) => call<PageOf<ConversationRecord>>("GET", "/conversations", { ...options, query }),
      get: (id: number, options?: RequestOptions) => call<Ok<ConversationDetail>>("GET", `/conversations/${idSegment(id)}`, options),
      /**
       * Adds a message without an AI call: a person's reply (`role: "agent"`, optional `agent_name`, Markdown, never branded),
       * an operator's reply in the bot's name (default role `assistant`) or a relayed visitor message.
       */
      addMessage: (id: number, input: PostMessageInput, options?: IdempotentOptions) =>
        call<Ok<Message>>("POST", `/conversations/${idSegment(id)}/messages`, { ...options, body: input }),
      /** A person takes the conversation over (`status: "human"`): the bot stays silent until `release`. Idempotent. */
      handoff: (id: number, input: HandoffInput = {}, options?: RequestOptions) =>
        call<Ok<ConversationRecord>>("POST", `/conversations/${idSegment(id)}/handoff`, { ...options, body: input }),
      /** Gives the conversation back to the bot (`status: "active"`). Idempotent. */
      release: (id: number, options?: RequestOptions) => call<Ok<ConversationRecord>>("POST", `/conversations/${idSegment(id)}/release`, options),
      /** Ends the conversation; a 400 when it had already ended. */
      end: (id: number, options?: RequestOptions) => call<Ok<EndedConversation>>("POST", `/conversations/${idSegment(id)}/end`, options),
      /**
       * Exports conversations with their messages (JSONL, or CSV with `format: "csv"`): the streamed
       * `Response`, e.g. `Readable.fromWeb(res.body)` piped to a file. Bad filters throw before any byte.
       */
      export: (query: ExportQuery = {}, options?: RequestOptions) => download("/conversations/export", query, options),
      /** The conversation export as records, one at a time while they stream in (memory stays flat). */
      exportRecords: (query: Omit<ExportQuery, "format"> = {}, options?: RequestOptions) => records<ConversationExportLine>("/conversations/export", query, options),
      /** Turns an assistant reply into an answer correction for the visitor question before it. */
      correctMessage: (id: number, messageId: number, input: CorrectMessageInput, options?: IdempotentOptions) =>
        call<Ok<Correction>>("POST", `/conversations/${idSegment(id)}/messages/${idSegment(messageId)}/correct`, { ...options, body: input }),
    },
    corrections: {
      /** A chatbot's answer corrections, newest first. */
      list: (slug: string, query: Pick<PageQuery, "page" | "per_page"> = {}, options?: RequestOptions) =>
        call<PageOf<Correction>>("GET", chatbotPath(slug, undefined, "/corrections"), { ...options, query }),
      /** Adds a correction: matching visitor questions get `answer` instead of a model reply. */
      create: (slug: string, input: CorrectionInput, options?: IdempotentOptions) =>
        call<Ok<Correction>>("POST", chatbotPath(slug, undefined, "/corrections"), { ...options, body: input }),
      /** Partial update: fields left out keep their value; null clears `source_name` or `source_url`. */
      update: (slug: string, id: number, patch: CorrectionUpdateInput, options?: RequestOptions) =>
        call<Ok<Correction>>("PUT", chatbotPath(slug, undefined, `/corrections/${idSegment(id)}`), { ...options, body: patch }),
      delete: (slug: string, id: number, options?: RequestOptions) =>
        call<Ok<{ id: number }>>("DELETE", chatbotPath(slug, undefined, `/corrections/${idSegment(id)}`), options),
    },
    leads: {
      list: (query: PageQuery = {}, options?: RequestOptions) => call<PageOf<Lead>>("GET", "/leads", { ...options, query }),
      get: (id: number, options?: RequestOptions) => call<Ok<LeadDetail>>("GET", `/leads/${idSegment(id)}`, options),
      /** Partial update: fields left out keep their value. */
      update: (id: number, patch: LeadUpdateInput, options?: RequestOptions) => call<Ok<Lead>>("PUT", `/leads/${idSegment(id)}`, { ...options, body: patch }),
      /** Exports leads (CSV, or JSONL with `format: "jsonl"`): the streamed `Response`. */
      export: (query: ExportQuery = {}, options?: RequestOptions) => download("/leads/export", query, options),
      /** The lead export as records, one at a time while they stream in. */
      exportRecords: (query: Omit<ExportQuery, "format"> = {}, options?: RequestOptions) => records<Lead>("/leads/export", query, options),
    },
    visitors: {
      /** Erases one visitor's conversations, messages, leads and webhook payloads (give exactly one of `visitor_id`, `email`); answers the counts. */
      erase: (visitor: EraseVisitorInput, options?: RequestOptions) => call<Ok<DeletedCounts>>("DELETE", "/visitors", { ...options, query: visitor }),
    },
    /** The organisation's audit log of erasures and retention passes, newest first. */
    audit: (query: { limit?: number } = {}, options?: RequestOptions) => call<Ok<AuditEntry[]>>("GET", "/audit", { ...options, query }),
    analytics: {
      /** Counts per UTC day or week (zero-filled) and totals: conversations, visitor messages, answered, cannot_answer, ratings, leads. */
      overview: (query: AnalyticsQuery = {}, options?: RequestOptions) => call<Ok<AnalyticsOverview>>("GET", "/analytics", { ...options, query }),
      /** Visitor questions the bot could not answer or whose reply was rated bad, near-duplicates grouped, most asked first. */
      unanswered: (query: UnansweredQuery = {}, options?: RequestOptions) => call<PageOf<QuestionGroup>>("GET", "/analytics/unanswered", { ...options, query }),
      /** Knowledge-base documents by how often replies cited them, never-cited ones included. */
      sources: (query: SourcesQuery = {}, options?: RequestOptions) => call<PageOf<SourceStats>>("GET", "/analytics/sources", { ...options, query }),
    },
    webhooks: {
      list: (options?: RequestOptions) => call<Ok<ListedWebhook[]>>("GET", "/webhooks", options),
      /** Registers a webhook, or updates the one with the same URL; `data.secret` only on creation. */
      register: (input: RegisterWebhookInput, options?: IdempotentOptions) => call<Ok<RegisteredWebhookData>>("POST", "/webhooks", { ...options, body: input }),
      delete: (id: number, options?: RequestOptions) => call<Ok<{ id: number }>>("DELETE", `/webhooks/${idSegment(id)}`, options),
      /** Sends one signed `webhook_test` event to the webhook now and answers the outcome (`delivered`, `status`, `error`); a failed delivery is not an error. */
      test: (id: number, options?: RequestOptions) => call<Ok<WebhookTestData>>("POST", `/webhooks/${idSegment(id)}/test`, options),
    },
    samples: {
      lead: (options?: RequestOptions) => call<Ok<Lead>>("GET", "/sample/lead", options),
      conversation: (options?: RequestOptions) => call<Ok<ConversationRecord>>("GET", "/sample/conversation", options),
    },
    /** The API's OpenAPI 3.1 document. */
    openapi: (options?: RequestOptions) => call<{ openapi: string } & Record<string, unknown>>("GET", "/openapi.json", options),
  };
}

export type ChatsvcClient = ReturnType<typeof createClient>;

/** An id as a path segment; anything but a positive integer would address another resource. */
function idSegment(id: number): string {
  if (!Number.isSafeInteger(id) || id < 1) throw new TypeError(`chatsvc: expected a positive integer id, got ${String(id)}`);
  return String(id);
}

const definedOnly = (query: object) => Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined && v !== null));

async function readJson(res: FetchResponse<unknown>): Promise<unknown> {
  const text = res.body ? await new Response(res.body).text() : "";
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The service's error envelope as a ChatsvcError; anything else (a proxy's HTML page) keeps just the status. */
function toChatsvcError(res: Pick<Response, "status" | "statusText" | "headers">, body: unknown): ChatsvcError {
  const retryAfter = res.headers.get("retry-after");
  const headers = retryAfter === null ? undefined : { "retry-after": retryAfter };
  if (body !== null && typeof body === "object" && typeof (body as { message?: unknown }).message === "string") {
    const { success: _, message, errors, ...details } = body as { success?: boolean; message: string; errors?: Record<string, string[]> };
    return new ChatsvcError(res.status, message, {
      ...(errors && { errors }),
      ...(Object.keys(details).length > 0 && { details }),
      ...(headers && { headers }),
    });
  }
  return new ChatsvcError(res.status, res.statusText || `Request failed with status ${res.status}`, headers && { headers });
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
