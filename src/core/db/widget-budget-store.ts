import type { Db } from "./open.js";

/** The budgets a widget message is counted against. */
export const BUDGET_NAMES = ["visitor_per_day", "chatbot_per_hour", "chatbot_per_day"] as const;
export type BudgetName = (typeof BUDGET_NAMES)[number];

/** A chatbot's own limits; null means the configured default. */
export type BudgetOverrides = Record<BudgetName, number | null>;

/** One counter a message is counted on: a budget, whose (visitor or chatbot) and which period. */
export interface BudgetCounter {
  budget: BudgetName;
  /** A visitor's hash for the visitor budget, empty for the chatbot's own. */
  subject: string;
  /** Start of the period, ISO. */
  period: string;
  /** At least 1 (a budget that is off has no counter). */
  limit: number;
}

export type BudgetReservation = { ok: true } | { ok: false; refused: BudgetCounter; first: boolean };

/**
 * Every SQL statement of widget budgets: per-chatbot limits and the shared
 * counters. Each call is one statement or one transaction, so instances that
 * share the database count together. Async, like every storage interface.
 *
 * @example
 * const store = createWidgetBudgetStore(db);
 * const result = await store.reserve(botId, counters, nowIso());
 */
export function createWidgetBudgetStore(db: Db) {
  const sqlite = db.$client;
  const overridesOf = sqlite.prepare<[number], { visitor_per_day: number | null; chatbot_per_hour: number | null; chatbot_per_day: number | null }>(
    "SELECT visitor_per_day, chatbot_per_hour, chatbot_per_day FROM widget_budgets WHERE chatbot_id = ?",
  );
  const saveOverrides = sqlite.prepare<[number, number | null, number | null, number | null, string]>(
    "INSERT INTO widget_budgets (chatbot_id, visitor_per_day, chatbot_per_hour, chatbot_per_day, updated_at) VALUES (?, ?, ?, ?, ?) " +
      "ON CONFLICT (chatbot_id) DO UPDATE SET visitor_per_day = excluded.visitor_per_day, chatbot_per_hour = excluded.chatbot_per_hour, " +
      "chatbot_per_day = excluded.chatbot_per_day, updated_at = excluded.updated_at",
  );
  // Counts one message unless the counter has reached its limit; no row back means refused.
  const take = sqlite.prepare<[number, string, string, string, number], { used: number }>(
    "INSERT INTO widget_budget_counters (chatbot_id, budget, subject, period, used) VALUES (?, ?, ?, ?, 1) " +
      "ON CONFLICT (chatbot_id, budget, subject, period) DO UPDATE SET used = used + 1 WHERE widget_budget_counters.used < ? RETURNING used",
  );
  const giveBack = sqlite.prepare<[number, string, string, string]>(
    "UPDATE widget_budget_counters SET used = used - 1 WHERE chatbot_id = ? AND budget = ? AND subject = ? AND period = ? AND used > 0",
  );
  const markExhausted = sqlite.prepare<[string, number, string, string, string]>(
    "UPDATE widget_budget_counters SET exhausted_at = ? WHERE chatbot_id = ? AND budget = ? AND subject = ? AND period = ? AND exhausted_at IS NULL",
  );
  const prune = sqlite.prepare<[string]>("DELETE FROM widget_budget_counters WHERE period < ?");

  const keyOf = (chatbotId: number, c: BudgetCounter) => [chatbotId, c.budget, c.subject, c.period] as const;

  const reserve = sqlite.transaction((chatbotId: number, counters: BudgetCounter[], now: string): BudgetReservation => {
    const taken: BudgetCounter[] = [];
    for (const counter of counters) {
      if (take.get(...keyOf(chatbotId, counter), counter.limit)) {
        taken.push(counter);
        continue;
      }
      for (const done of taken) giveBack.run(...keyOf(chatbotId, done));
      const first = markExhausted.run(now, ...keyOf(chatbotId, counter)).changes === 1;
      return { ok: false, refused: counter, first };
    }
    return { ok: true };
  });
  const release = sqlite.transaction((chatbotId: number, counters: BudgetCounter[]) => {
    for (const counter of counters) giveBack.run(...keyOf(chatbotId, counter));
  });

  return {
    /** The chatbot's own limits (all null when it has none). */
    async overrides(chatbotId: number): Promise<BudgetOverrides> {
      const row = overridesOf.get(chatbotId);
      return { visitor_per_day: row?.visitor_per_day ?? null, chatbot_per_hour: row?.chatbot_per_hour ?? null, chatbot_per_day: row?.chatbot_per_day ?? null };
    },

    /** Replaces the chatbot's own limits. */
    async setOverrides(chatbotId: number, limits: BudgetOverrides, now: string): Promise<void> {
      saveOverrides.run(chatbotId, limits.visitor_per_day, limits.chatbot_per_hour, limits.chatbot_per_day, now);
    },

    /**
     * Counts one message on every counter, or on none: the first counter at
     * its limit refuses, and `first` is true for exactly one refusal per counter.
     */
    async reserve(chatbotId: number, counters: BudgetCounter[], now: string): Promise<BudgetReservation> {
      return reserve.immediate(chatbotId, counters, now);
    },

    /** Gives a reserved message back (it was not answered). */
    async release(chatbotId: number, counters: BudgetCounter[]): Promise<void> {
      release.immediate(chatbotId, counters);
    },

    /** Deletes the counters of periods that started before `before`. */
    async prune(before: string): Promise<number> {
      return prune.run(before).changes;
    },
  };
}

export type WidgetBudgetStore = ReturnType<typeof createWidgetBudgetStore>;
