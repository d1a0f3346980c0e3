import type { BudgetCounter, BudgetCounting, BudgetOverrides, WidgetBudgetStore } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";
import type { WriteGate } from "./write-gate.js";

/**
 * Widget budgets: per-chatbot limits and the shared counters. Each call is
 * one statement or one transaction, so processes sharing the database count together.
 *
 * @example
 * const store = createWidgetBudgetStore(sqlite, createWriteGate());
 * const result = await store.reserve(botId, counters, nowIso());
 */
export function createWidgetBudgetStore(sqlite: Sqlite, gate: WriteGate): WidgetBudgetStore {
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

  const reserve = sqlite.transaction((chatbotId: number, counters: BudgetCounter[], now: string): BudgetCounting => {
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
    async overrides(chatbotId) {
      const row = overridesOf.get(chatbotId);
      return { visitor_per_day: row?.visitor_per_day ?? null, chatbot_per_hour: row?.chatbot_per_hour ?? null, chatbot_per_day: row?.chatbot_per_day ?? null };
    },

    async setOverrides(chatbotId, limits, now) {
      saveOverrides.run(chatbotId, limits.visitor_per_day, limits.chatbot_per_hour, limits.chatbot_per_day, now);
    },

    async reserve(chatbotId, counters, now) {
      return gate.run(() => reserve.immediate(chatbotId, counters, now));
    },

    async release(chatbotId, counters) {
      return gate.run(() => void release.immediate(chatbotId, counters));
    },

    async prune(before) {
      return prune.run(before).changes;
    },
  };
}
