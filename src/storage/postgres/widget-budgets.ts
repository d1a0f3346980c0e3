import type pg from "pg";
import type { BudgetCounter, BudgetCounting, BudgetOverrides, WidgetBudgetStore } from "../../core/storage/index.js";
import { one, run, statement, transaction } from "./client.js";

const overridesOf = statement("budgets_overrides", "SELECT visitor_per_day, chatbot_per_hour, chatbot_per_day FROM widget_budgets WHERE chatbot_id = $1");
const saveOverrides = statement(
  "budgets_save_overrides",
  `INSERT INTO widget_budgets (chatbot_id, visitor_per_day, chatbot_per_hour, chatbot_per_day, updated_at) VALUES ($1, $2, $3, $4, $5)
   ON CONFLICT (chatbot_id) DO UPDATE SET visitor_per_day = excluded.visitor_per_day, chatbot_per_hour = excluded.chatbot_per_hour,
     chatbot_per_day = excluded.chatbot_per_day, updated_at = excluded.updated_at`,
);
// Counts one message unless the counter has reached its limit (the row is locked either way); no row back means refused.
const take = statement(
  "budgets_take",
  `INSERT INTO widget_budget_counters AS c (chatbot_id, budget, subject, period, used) VALUES ($1, $2, $3, $4, 1)
   ON CONFLICT (chatbot_id, budget, subject, period) DO UPDATE SET used = c.used + 1 WHERE c.used < $5 RETURNING used`,
);
const giveBack = statement(
  "budgets_give_back",
  "UPDATE widget_budget_counters SET used = used - 1 WHERE chatbot_id = $1 AND budget = $2 AND subject = $3 AND period = $4 AND used > 0",
);
const markExhausted = statement(
  "budgets_mark_exhausted",
  "UPDATE widget_budget_counters SET exhausted_at = $5 WHERE chatbot_id = $1 AND budget = $2 AND subject = $3 AND period = $4 AND exhausted_at IS NULL",
);
const prune = statement("budgets_prune", "DELETE FROM widget_budget_counters WHERE period < $1");

const keyOf = (chatbotId: number, c: BudgetCounter) => [chatbotId, c.budget, c.subject, c.period];

/**
 * Widget message budgets on PostgreSQL: counters every instance shares, each
 * reservation one transaction (all counters or none).
 *
 * @example
 * const budgets = createPgWidgetBudgetStore(pool);
 * await budgets.reserve(botId, counters, new Date().toISOString());
 */
export function createPgWidgetBudgetStore(pool: pg.Pool): WidgetBudgetStore {
  return {
    async overrides(chatbotId: number): Promise<BudgetOverrides> {
      const row = await one<BudgetOverrides>(pool, overridesOf, [chatbotId]);
      return { visitor_per_day: row?.visitor_per_day ?? null, chatbot_per_hour: row?.chatbot_per_hour ?? null, chatbot_per_day: row?.chatbot_per_day ?? null };
    },

    async setOverrides(chatbotId: number, limits: BudgetOverrides, now: string): Promise<void> {
      await run(pool, saveOverrides, [chatbotId, limits.visitor_per_day, limits.chatbot_per_hour, limits.chatbot_per_day, now]);
    },

    reserve: (chatbotId: number, counters: BudgetCounter[], now: string): Promise<BudgetCounting> =>
      transaction(pool, async (tx) => {
        const taken: BudgetCounter[] = [];
        for (const counter of counters) {
          if (await one(tx, take, [...keyOf(chatbotId, counter), counter.limit])) {
            taken.push(counter);
            continue;
          }
          for (const done of taken) await run(tx, giveBack, keyOf(chatbotId, done));
          const first = (await run(tx, markExhausted, [...keyOf(chatbotId, counter), now])) === 1;
          return { ok: false, refused: counter, first };
        }
        return { ok: true };
      }),

    release: (chatbotId: number, counters: BudgetCounter[]): Promise<void> =>
      transaction(pool, async (tx) => {
        for (const counter of counters) await run(tx, giveBack, keyOf(chatbotId, counter));
      }),

    prune: (before: string): Promise<number> => run(pool, prune, [before]),
  };
}
