import { z } from "zod";
import { toPlainText } from "../core/branding.js";
import { DEFAULT_MESSAGES, type Chatbot, type Chatbots } from "../core/chatbots.js";
import { nowIso, utcMonth } from "../core/clock.js";
import { creditCost, type ResolvedConfig } from "../core/config.js";
import { agentOf, type Conversations } from "../core/conversations.js";
import { creditLimitError, toCreditStatus, type Credits } from "../core/credits.js";
import { ChatsvcError } from "../core/errors.js";
import type { EventBus, EventName } from "../core/events.js";
import type { Message, Messages, Source } from "../core/messages.js";
import type { ConversationRef, ConversationStore, CreditRecord, MessageRecord, RecordedEvent, TurnRefusal } from "../core/storage/index.js";
import { body, id, oneOf, parse, text } from "../core/validation.js";
import type { Knowledge, RetrievedChunk } from "../knowledge/types.js";
import { createCallSignal } from "../models/call-signal.js";
import { MODEL_FAILED_MESSAGE, toModelError } from "../models/errors.js";
import { buildPrompt, HISTORY_BUDGET_CHARS } from "../models/prompt.js";
import type { Models } from "../models/registry.js";
import type { ChatModel, ChatRequest, PromptMessage } from "../models/types.js";
import type { Renderer } from "../render/render.js";
import type { CorrectionAnswers, MatchedCorrection } from "./corrections.js";

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

/** `meta` of a send-message reply: the organisation's credits after this message. */
export interface CreditMeta {
  credits_used: number;
  credits_max: number;
  credits_remaining: number;
  this_message: number;
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

export interface ChatReply {
  data: ReplyData | HumanHandledData;
  meta: CreditMeta;
}

export interface AnswerOptions {
  /** Aborts the model call (e.g. the client disconnected); nothing is stored or charged. */
  signal?: AbortSignal;
  /** Called with each piece of text as the model produces it (Markdown source, not HTML). */
  onDelta?: (text: string) => void;
}

/** A checked send-message request whose answer has not been generated yet. */
export interface PendingReply {
  conversationId: number;
  /** `human` when a person handles the conversation: the answer stores the message, calls no model and charges nothing. */
  handledBy: "bot" | "human";
  /** Retrieval, the model call, then one transaction storing, charging and firing events. */
  answer(options?: AnswerOptions): Promise<ChatReply>;
}

export interface SendMessageInput {
  message: string;
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

export const MAX_MESSAGE_CHARS = 10_000;

/** Body of the send-message endpoint. */
export const sendSchema = body({ message: text("message", { min: 1, max: MAX_MESSAGE_CHARS }) });
/** Body of the rate endpoint. */
export const rateSchema = body({ message_id: id("message_id"), rating: oneOf("rating", ["good", "bad"]) });
/** Body of the account-level add-message endpoint. */
export const postSchema = body({
  message: text("message", { min: 1, max: MAX_MESSAGE_CHARS }),
  role: oneOf("role", ["user", "assistant", "agent"]).optional(),
  agent_name: text("agent_name", { min: 1, max: 100 }).nullish(),
}).refine((b) => b.agent_name == null || b.role === "agent", { message: "The agent name field is only for agent messages.", path: ["agent_name"] });

const ended = () => ChatsvcError.badRequest("Conversation has already ended");

export type Chat = ReturnType<typeof createChat>;

export interface ChatDeps {
  config: ResolvedConfig;
  store: ConversationStore;
  chatbots: Chatbots;
  conversations: Conversations;
  messages: Messages;
  credits: Credits;
  knowledge: Knowledge;
  models: Models;
  events: EventBus;
  renderer: Renderer;
  corrections: CorrectionAnswers;
}

/** What one generation produced, before anything is stored. */
interface Generated {
  html: string;
  sources: Source[];
  cannotAnswer: boolean;
  model: string;
  responseMs: number;
}

/** One source per document, with its best chunk's score: the shape replies and history carry. */
export function toSources(chunks: RetrievedChunk[]): Source[] {
  const byDocument = new Map<number, Source>();
  for (const c of chunks) {
    const score = Math.round(c.score * 10_000) / 10_000;
    const seen = byDocument.get(c.document_id);
    if (seen) seen.score = Math.max(seen.score, score);
    else byDocument.set(c.document_id, { name: c.name, type: c.type, score, ...(c.url ? { url: c.url } : {}), ...(c.title ? { title: c.title } : {}) });
  }
  return [...byDocument.values()];
}

/** The model name replies answered by an answer correction carry (no model was called). */
export const CORRECTION_MODEL = "correction";

/** The source naming the correction a reply came from. */
export function correctionSource({ correction, score }: MatchedCorrection): Source {
  return {
    name: correction.source_name ?? correction.question,
    type: "correction",
    score: Math.round(score * 10_000) / 10_000,
    id: correction.id,
    ...(correction.source_url ? { url: correction.source_url } : {}),
  };
}

/** Earlier turns as a model sees them: plain text, regenerated replies left out, before message `beforeId`. */
function toPrompt(rows: MessageRecord[], beforeId = Number.MAX_SAFE_INTEGER): PromptMessage[] {
  // A person's replies are the service's side of the conversation too: the model sees them as assistant turns.
  return rows
    .filter((row) => row.id < beforeId)
    .map((row) => (row.role === "user" ? { role: "user", content: row.content } : { role: "assistant", content: toPlainText(row.content) }));
}

/** Messages read per step of {@link recentHistory}: about the turns a prompt's history budget holds. */
const HISTORY_PAGE = 24;

/**
 * The conversation's latest turns, enough for the prompt's history budget
 * (the prompt keeps the newest turns within it): read from the end a page at
 * a time, so a long conversation's next message costs what a short one's does.
 */
async function recentHistory(store: ConversationStore, conversationId: number): Promise<PromptMessage[]> {
  const turns: PromptMessage[] = [];
  let chars = 0;
  let beforeId: number | undefined;
  for (;;) {
    const page = await store.latestMessages(conversationId, HISTORY_PAGE, beforeId);
    for (const turn of toPrompt(page)) {
      turns.push(turn);
      chars += turn.content.length;
    }
    if (page.length < HISTORY_PAGE || chars > HISTORY_BUDGET_CHARS) return turns.reverse();
    beforeId = page.at(-1)!.id;
  }
}

const toActions = (recorded: RecordedEvent[]): EventAction[] => recorded.map(({ event, deliveries }) => ({ type: "webhook", event: event.name, deliveries }));

/**
 * The send-message pipeline: checks (chatbot, conversation, body, state,
 * credits), retrieval, the model call with timeout and abort, rendering, then
 * one storage write that re-checks, charges credits, stores both messages
 * and records `message_received`. A refused or failed request writes nothing.
 *
 * @example
 * const { data, meta } = await service.chat.send(orgId, "demo", conversationId, { message: "How do I install it?" });
 */
export function createChat(deps: ChatDeps) {
  const { config, store, chatbots, conversations, messages, credits, knowledge, models, events, renderer, corrections } = deps;
  const specOf = (bot: Chatbot) => bot.model ?? config.chatModel;

  const creditMeta = (record: CreditRecord, cost: number): CreditMeta => {
    const status = toCreditStatus(record);
    return { credits_used: status.credits_used, credits_max: status.credits_max, credits_remaining: status.credits_remaining, this_message: cost };
  };

  const failed = (conversationId: number, cause: unknown) =>
    new ChatsvcError(500, MODEL_FAILED_MESSAGE, { details: { conversation_id: conversationId }, cause });

  /**
   * A correction matching the question answers it: no retrieval, no model call.
   * Else retrieval and the model call. What goes wrong with a provider (the model, the
   * embedder, their deadline) is the provider's failure: 500 with the conversation id.
   * `earlier` (the history a model reads) is read meanwhile: retrieval does not need it.
   */
  const generate = async (bot: Chatbot, conversationId: number, question: string, earlier: Promise<PromptMessage[]>, options: AnswerOptions): Promise<Generated> => {
    const started = performance.now();
    const spec = specOf(bot);
    const call = createCallSignal(options.signal, config.modelTimeoutMs);
    const retrieve = async (): Promise<[MatchedCorrection | undefined, RetrievedChunk[]]> => {
      const match = await untilAborted(corrections.find(bot.id, question), call.signal);
      return [match, match ? [] : await untilAborted(knowledge.searchChatbot(bot.id, question, { extract: models.extractsAnswer(spec) }), call.signal)];
    };
    let history: PromptMessage[];
    let corrected: MatchedCorrection | undefined;
    let context: RetrievedChunk[];
    try {
      [history, [corrected, context]] = await Promise.all([earlier, retrieve()]);
    } catch (error) {
      // The embedder is a provider (its failures are ChatsvcErrors) and the call's deadline is the model's;
      // anything else (the database) is the service's own failure and reaches the edge as that.
      const providers = error instanceof ChatsvcError || call.signal.aborted;
      const failure = providers ? failed(conversationId, toModelError(error, spec, call.signal)) : error;
      call.dispose();
      throw failure;
    }
    try {
      if (corrected) {
        options.onDelta?.(corrected.correction.answer);
        const html = await renderer.render(corrected.correction.answer);
        if (html === "") throw new Error("The correction's answer was empty once sanitised");
        return { html, sources: [correctionSource(corrected)], cannotAnswer: false, model: CORRECTION_MODEL, responseMs: elapsed(started) };
      }
      const fallback = async () => {
        const message = bot.fallback_message.trim() || DEFAULT_MESSAGES.fallback_message;
        options.onDelta?.(message);
        return { html: await renderer.render(message), sources: [], cannotAnswer: true, model: spec, responseMs: elapsed(started) };
      };
      if (context.length === 0) return await fallback();
      const model = models.get(spec);
      const request: ChatRequest = {
        messages: buildPrompt({
          botName: bot.display_name,
          instructions: bot.instructions,
          language: bot.language,
          context,
          history,
          question,
          fallbackMessage: bot.fallback_message,
        }),
        question,
        context,
        signal: call.signal,
      };
      if (model.declines?.(request)) return await fallback();
      const { text, model: used } = await untilAborted(runModel(model, request, options.onDelta), call.signal);
      if (text.trim() === "") throw new Error("The model answered with empty text");
      const html = await renderer.render(text);
      if (html === "") throw new Error("The model's answer was empty once sanitised");
      return { html, sources: toSources(context), cannotAnswer: false, model: used, responseMs: elapsed(started) };
    } catch (error) {
      throw failed(conversationId, toModelError(error, spec, call.signal));
    } finally {
      call.dispose();
    }
  };

  /** The conversation as the chatbot endpoints address it, refusing inactive chatbots. */
  const openConversation = async (organizationId: number, slug: string, conversationId: number) => {
    const bot = await chatbots.resolveActive(organizationId, slug);
    const conversation = await conversations.ofChatbot(bot, conversationId);
    return { bot, conversation };
  };

  /**
   * A caller that gave up (the client went away) while the answer was being
   * generated gets nothing stored or charged, even when the model had already
   * finished: checked before the write, and again by the write as its first step
   * (for storage whose transactions can wait for a connection).
   */
  const assertStillWanted = (bot: Chatbot, conversationId: number, signal: AbortSignal | undefined) => {
    if (signal?.aborted) throw failed(conversationId, toModelError(signal.reason, specOf(bot), signal));
  };

  /** The error for a write the storage refused after re-checking inside its transaction. */
  const refusal = (bot: Chatbot, ref: ConversationRef, refused: TurnRefusal): ChatsvcError => {
    switch (refused.refused) {
      case "aborted":
        return failed(ref.id, toModelError(ref.signal?.reason, specOf(bot), ref.signal));
      case "missing":
        return ChatsvcError.notFound("Conversation not found");
      case "ended":
        return ended();
      case "not-latest":
        return ChatsvcError.badRequest("Only the latest reply can be regenerated");
      case "credits":
        return creditLimitError(refused.credits);
    }
  };

  const toReply = (row: MessageRecord, generated: Generated, brandingRequired: boolean, actions: EventAction[]): ReplyData => ({
    reply: messages.present(generated.html, brandingRequired),
    conversation_id: row.conversation_id,
    message_id: row.id,
    cannot_answer: generated.cannotAnswer,
    sources: generated.sources,
    actions,
    model: generated.model,
    response_ms: generated.responseMs,
  });

  const assistantMessage = (generated: Generated) => ({
    role: "assistant" as const,
    content: generated.html,
    sources: JSON.stringify(generated.sources),
    model: generated.model,
    response_ms: generated.responseMs,
    cannot_answer: generated.cannotAnswer,
    created_at: nowIso(),
  });

  /**
   * A visitor message while a person handles the conversation: stored with its
   * `message_received`, and nothing else (no retrieval, no model, no charge).
   */
  const forPerson = (organizationId: number, bot: Chatbot, conversationId: number, message: string, receivedAt: string): PendingReply => ({
    conversationId,
    handledBy: "human",
    async answer(options = {}) {
      const ref: ConversationRef = { id: conversationId, chatbot_id: bot.id, signal: options.signal };
      const stored = await store.storeMessage(ref, { role: "user", content: message, created_at: receivedAt }, ({ conversation: fresh, message: row }) => ({
        name: "message_received",
        organizationId,
        data: { id: row.id, conversation_id: fresh.id, session_id: fresh.session_id, role: "user", content: message, agent: agentOf(fresh), created_at: row.created_at },
      }));
      if ("refused" in stored) throw refusal(bot, ref, stored);
      events.publish(stored.events);
      const status = await credits.status(organizationId);
      return {
        data: { reply: null, handled_by: "human", conversation_id: conversationId, user_message_id: stored.result.message.id, actions: toActions(stored.events) },
        meta: { credits_used: status.credits_used, credits_max: status.credits_max, credits_remaining: status.credits_remaining, this_message: 0 },
      };
    },
  });

  const prepare = async (organizationId: number, slug: string, conversationId: number, input: SendMessageInput | undefined): Promise<PendingReply> => {
    const { bot, conversation } = await openConversation(organizationId, slug, conversationId);
    const { message } = parse(sendSchema, input);
    if (conversation.ended_at !== null) throw ended();
    // Who answers is decided as the message arrives: a takeover while a reply is being generated lets that reply through.
    if (conversation.handling === "human") return forPerson(organizationId, bot, conversation.id, message, nowIso());
    const cost = creditCost(config, specOf(bot));
    await credits.assertAvailable(organizationId, cost);
    const receivedAt = nowIso();
    return {
      conversationId: conversation.id,
      handledBy: "bot",
      async answer(options = {}) {
        const history = models.readsHistory(specOf(bot)) ? recentHistory(store, conversation.id) : Promise.resolve([]);
        const generated = await generate(bot, conversation.id, message, history, options);
        assertStillWanted(bot, conversation.id, options.signal);
        const ref: ConversationRef = { id: conversation.id, chatbot_id: bot.id, signal: options.signal };
        const [stored, brandingRequired] = await Promise.all([
          store.storeTurn(
            ref,
            {
              user: { role: "user", content: message, created_at: receivedAt },
              assistant: assistantMessage(generated),
              charge: { organization_id: organizationId, month: utcMonth(), cost },
            },
            ({ conversation: fresh, user }) => ({
              name: "message_received",
              organizationId,
              data: { id: user.id, conversation_id: fresh.id, session_id: fresh.session_id, role: "user", content: message, agent: agentOf(fresh), created_at: user.created_at },
            }),
          ),
          messages.brandingRequired(organizationId),
        ]);
        if ("refused" in stored) throw refusal(bot, ref, stored);
        events.publish(stored.events);
        const { assistant, credits: charged } = stored.result;
        return { data: toReply(assistant, generated, brandingRequired, toActions(stored.events)), meta: creditMeta(charged, cost) };
      },
    };
  };

  return {
    /**
     * Checks a send-message request (403/404/422/400/429) without generating
     * anything, so a streaming caller can still answer those with a status code.
     */
    prepare,

    /** Sends a visitor message and answers it (or, while a person handles the conversation, only stores it). */
    async send(organizationId: number, slug: string, conversationId: number, input: SendMessageInput | undefined, options: AnswerOptions = {}): Promise<ChatReply> {
      return (await prepare(organizationId, slug, conversationId, input)).answer(options);
    },

    /**
     * Replaces the conversation's latest assistant reply with a new answer to
     * the same visitor message; the old one is flagged and left out of history.
     * Charged like a message; fires no event (the visitor sent nothing new).
     */
    async regenerate(organizationId: number, slug: string, conversationId: number, messageId: number, options: AnswerOptions = {}): Promise<ChatReply> {
      const { bot, conversation } = await openConversation(organizationId, slug, conversationId);
      const [old, rows] = await Promise.all([store.findMessage(conversation.id, messageId), store.messages(conversation.id)]);
      if (!old || old.role !== "assistant" || old.regenerated) throw ChatsvcError.notFound("Message not found");
      if (conversation.ended_at !== null) throw ended();
      if (conversation.handling === "human") throw ChatsvcError.badRequest("A person handles this conversation: the bot does not answer until it is released");
      if (rows.findLast((row) => row.role === "assistant")?.id !== old.id) throw ChatsvcError.badRequest("Only the latest reply can be regenerated");
      const earlier = toPrompt(rows, old.id);
      const questionAt = earlier.findLastIndex((m) => m.role === "user");
      if (questionAt < 0) throw ChatsvcError.badRequest("This reply answers no visitor message, so it cannot be regenerated");
      const cost = creditCost(config, specOf(bot));
      await credits.assertAvailable(organizationId, cost);
      const generated = await generate(bot, conversation.id, earlier[questionAt]!.content, Promise.resolve(earlier.slice(0, questionAt)), options);
      assertStillWanted(bot, conversation.id, options.signal);
      const ref: ConversationRef = { id: conversation.id, chatbot_id: bot.id, signal: options.signal };
      const [stored, brandingRequired] = await Promise.all([
        store.storeRegeneration(ref, old.id, assistantMessage(generated), { organization_id: organizationId, month: utcMonth(), cost }),
        messages.brandingRequired(organizationId),
      ]);
      if ("refused" in stored) throw refusal(bot, ref, stored);
      return { data: toReply(stored.assistant, generated, brandingRequired, []), meta: creditMeta(stored.credits, cost) };
    },

    /** Rates an assistant message of the conversation; rating again replaces the rating. */
    async rate(organizationId: number, slug: string, conversationId: number, input: RateInput | undefined): Promise<RateInput> {
      const conversation = await conversations.ofChatbot(await chatbots.resolve(organizationId, slug), conversationId);
      const { message_id, rating } = parse(rateSchema, input);
      const row = await store.findMessage(conversation.id, message_id);
      if (!row || row.role !== "assistant" || row.regenerated) throw ChatsvcError.notFound("Message not found");
      await store.rate(row.id, rating);
      return { message_id: row.id, rating };
    },

    /**
     * Account level: adds a message without calling a model (an operator's
     * reply, a person's `agent` reply, or a visitor message relayed from
     * elsewhere). Assistant and agent text is Markdown, rendered and sanitised
     * like model replies (agent replies never carry the branding element); a
     * `user` message fires `message_received`. Not charged. Posting does not
     * change who answers the visitor: see `conversations.handOff`.
     */
    async post(organizationId: number, conversationId: number, input: PostMessageInput | undefined): Promise<Message> {
      const conversation = await conversations.ofOrganization(organizationId, conversationId);
      const { message, role = "assistant", agent_name: agentName } = parse(postSchema, input);
      if (conversation.ended_at !== null) throw ended();
      const content = role === "user" ? message : await renderer.render(message);
      if (content === "") throw ChatsvcError.validation({ message: ["The message field has no content once unsafe HTML is removed."] });
      const ref: ConversationRef = { id: conversation.id, organization_id: organizationId };
      const [stored, brandingRequired] = await Promise.all([
        store.storeMessage(
          ref,
          { role, content, agent_name: role === "agent" ? (agentName ?? null) : null, created_at: nowIso() },
          role === "user"
            ? ({ conversation: fresh, message: row }) => ({
                name: "message_received",
                organizationId,
                data: { id: row.id, conversation_id: fresh.id, session_id: fresh.session_id, role, content, agent: agentOf(fresh), created_at: row.created_at },
              })
            : undefined,
        ),
        messages.brandingRequired(organizationId),
      ]);
      if ("refused" in stored) {
        if (stored.refused === "missing") throw ChatsvcError.notFound("Conversation not found");
        throw ended();
      }
      events.publish(stored.events);
      return messages.toMessage(stored.result.message, brandingRequired);
    },
  };
}

const elapsed = (started: number) => Math.max(0, Math.round(performance.now() - started));

/** The model's full answer: `chat()`, or `stream()` when the caller wants deltas. */
async function runModel(model: ChatModel, request: ChatRequest, onDelta?: (text: string) => void): Promise<{ text: string; model: string }> {
  if (!onDelta) {
    const result = await model.chat(request);
    if (typeof result?.text !== "string") throw new Error("The model answered without text");
    return { text: result.text, model: typeof result.model === "string" && result.model ? result.model : model.spec };
  }
  let text = "";
  for await (const delta of model.stream(request)) {
    if (typeof delta !== "string") throw new Error("The model streamed something that is not text");
    request.signal?.throwIfAborted();
    text += delta;
    if (delta !== "") onDelta(delta);
  }
  return { text, model: model.spec };
}

/**
 * Settles with `work`, or rejects as soon as `signal` aborts: a provider (or
 * embedder) that ignores its signal still cannot hold a request past the timeout.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
