import { createHash } from "node:crypto";
import { z } from "zod";
import type { Chatbot } from "./chatbots.js";
import { nowIso } from "./clock.js";
import type { ResolvedConfig } from "./config.js";
import { ChatsvcError } from "./errors.js";
import type { DomainEvent, EventBus } from "./events.js";
import type { BudgetCounter, BudgetName, BudgetOverrides, RecordedEvent, WidgetBudgetStore } from "./storage/index.js";
import { body, parse } from "./validation.js";

export type { BudgetName, BudgetOverrides };

/** The budgets a widget message is counted against. */
export const BUDGET_NAMES = ["visitor_per_day", "chatbot_per_hour", "chatbot_per_day"] as const satisfies readonly BudgetName[];

/** A chatbot's widget budgets: the limits in force (0: no limit) and the chatbot's own settings (null: the default). */
export interface WidgetBudget {
  limits: Record<BudgetName, number>;
  overrides: BudgetOverrides;
}

/** Input of {@link WidgetBudgets.set}: a limit per budget (0 for none), null for the configured default; absent ones stay. */
export type WidgetBudgetInput = Partial<Record<BudgetName, number | null>>;

/** A widget message counted against the budgets; `release` gives it back when it was not answered. */
export interface BudgetReservation {
  release(): Promise<void>;
}

/** `budget_exhausted` data: which budget of which chatbot ran out, until when. */
export interface BudgetExhaustedPayload {
  agent: { id: number; name: string; slug: string };
  budget: BudgetName;
  limit: number;
  period_start: string;
  resets_at: string;
  exhausted_at: string;
}

export const BUDGET_EXHAUSTED_MESSAGE = "This chat has reached its message limit for now; please try again later";

const limitField = (name: BudgetName) =>
  z
    .number({ error: `The ${name} field must be a non-negative integer or null.` })
    .int({ message: `The ${name} field must be a non-negative integer or null.` })
    .min(0, { message: `The ${name} field must be a non-negative integer or null.` })
    .max(1_000_000_000, { message: `The ${name} field must not be greater than 1000000000.` })
    .nullable()
    .optional();

/** Body of the set-widget-budget endpoint. */
export const widgetBudgetSchema = body({
  visitor_per_day: limitField("visitor_per_day"),
  chatbot_per_hour: limitField("chatbot_per_hour"),
  chatbot_per_day: limitField("chatbot_per_day"),
});

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const lengthOf: Record<BudgetName, number> = { visitor_per_day: DAY_MS, chatbot_per_hour: HOUR_MS, chatbot_per_day: DAY_MS };
/** Counters are kept this long after their period started (then pruned, at most once an hour per instance). */
const KEEP_MS = 2 * DAY_MS;

export type WidgetBudgets = ReturnType<typeof createWidgetBudgets>;

export interface WidgetBudgetsDeps {
  config: ResolvedConfig;
  events: EventBus;
  /** Records an event with no other stored change (its outbox rows), e.g. `storage.outbox.record`. */
  record(event: DomainEvent): Promise<RecordedEvent>;
  /** Milliseconds since the epoch; tests pass a fixed one. Default `Date.now`. */
  clock?: () => number;
}

/**
 * Widget budgets: how many widget messages one visitor (client IP) may send a
 * chatbot per UTC day, and how many a chatbot answers per UTC hour and day.
 * Counted in the database, one conditional increment per counter, so every
 * instance sharing it counts together; a message that is not answered is given
 * back. The first refusal of a budget in a period fires `budget_exhausted`.
 *
 * @example
 * const reservation = await service.widgetBudgets.reserve(bot, "203.0.113.9"); // 429 with Retry-After when spent
 * try { await answer(); } catch (e) { await reservation.release(); throw e; }
 */
export function createWidgetBudgets(store: WidgetBudgetStore, { config, events, record, clock = Date.now }: WidgetBudgetsDeps) {
  const defaults: Record<BudgetName, number> = {
    visitor_per_day: config.widget.visitorMessagesPerDay,
    chatbot_per_hour: config.widget.chatbotMessagesPerHour,
    chatbot_per_day: config.widget.chatbotMessagesPerDay,
  };
  let prunedAt = 0;

  const budgetOf = async (bot: Chatbot): Promise<WidgetBudget> => {
    const overrides = await store.overrides(bot.id);
    const limits = { ...defaults };
    for (const name of BUDGET_NAMES) limits[name] = overrides[name] ?? defaults[name];
    return { limits, overrides };
  };

  const periodStart = (name: BudgetName, at: number) => at - (at % lengthOf[name]);

  const announce = async (bot: Chatbot, counter: BudgetCounter, at: number): Promise<BudgetExhaustedPayload> => {
    const data: BudgetExhaustedPayload = {
      agent: { id: bot.id, name: bot.name, slug: bot.slug },
      budget: counter.budget,
      limit: counter.limit,
      period_start: counter.period,
      resets_at: new Date(Date.parse(counter.period) + lengthOf[counter.budget]).toISOString(),
      exhausted_at: new Date(at).toISOString(),
    };
    events.publish([await record({ name: "budget_exhausted", organizationId: bot.organization_id, data })]);
    return data;
  };

  return {
    /** The chatbot's budgets in force and its own settings. */
    get: budgetOf,

    /** Sets the chatbot's own limits (0: no limit; null: back to the configured default); others stay. */
    async set(bot: Chatbot, input: WidgetBudgetInput | undefined): Promise<WidgetBudget> {
      const changes = parse(widgetBudgetSchema, input);
      const { overrides } = await budgetOf(bot);
      const next = { ...overrides };
      for (const name of BUDGET_NAMES) if (changes[name] !== undefined) next[name] = changes[name];
      await store.setOverrides(bot.id, next, nowIso());
      return budgetOf(bot);
    },

    /**
     * Counts one widget message of `visitor` (the client IP) against the
     * chatbot's budgets, or refuses it with 429 and `Retry-After` (seconds to
     * the end of the spent period), counting nothing. `onExhausted` hears the
     * first refusal of a budget in its period, after `budget_exhausted` fired.
     */
    async reserve(bot: Chatbot, visitor: string | undefined, onExhausted?: (data: BudgetExhaustedPayload) => void): Promise<BudgetReservation> {
      const at = clock();
      if (at - prunedAt > HOUR_MS) {
        prunedAt = at;
        await store.prune(new Date(at - KEEP_MS).toISOString());
      }
      const { limits } = await budgetOf(bot);
      const subject = createHash("sha256").update(visitor ?? "unknown").digest("base64url").slice(0, 22);
      const counters: BudgetCounter[] = BUDGET_NAMES.filter((name) => limits[name] > 0).map((name) => ({
        budget: name,
        subject: name === "visitor_per_day" ? subject : "",
        period: new Date(periodStart(name, at)).toISOString(),
        limit: limits[name],
      }));
      const result = await store.reserve(bot.id, counters, new Date(at).toISOString());
      if (!result.ok) {
        const { refused } = result;
        const resetsAt = periodStart(refused.budget, at) + lengthOf[refused.budget];
        // The claim of the first refusal and the event are two transactions: a crash between them loses this one notice.
        if (result.first) onExhausted?.(await announce(bot, refused, at));
        throw new ChatsvcError(429, BUDGET_EXHAUSTED_MESSAGE, {
          details: { budget: refused.budget },
          headers: { "retry-after": String(Math.max(1, Math.ceil((resetsAt - at) / 1000))) },
        });
      }
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          await store.release(bot.id, counters);
        },
      };
    },
  };
}
