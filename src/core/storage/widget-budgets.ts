/** The budgets a widget message is counted against. */
export type BudgetName = "visitor_per_day" | "chatbot_per_hour" | "chatbot_per_day";

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

export type BudgetCounting = { ok: true } | { ok: false; refused: BudgetCounter; first: boolean };

/** Per-chatbot widget budget limits and the counters every instance counts on together. */
export interface WidgetBudgetStore {
  /** The chatbot's own limits (all null when it has none). */
  overrides(chatbotId: number): Promise<BudgetOverrides>;
  /** Replaces the chatbot's own limits. */
  setOverrides(chatbotId: number, limits: BudgetOverrides, now: string): Promise<void>;
  /**
   * One transaction: counts one message on every counter, or on none: the
   * first counter at its limit refuses, and `first` is true for exactly one
   * refusal per counter and period.
   */
  reserve(chatbotId: number, counters: BudgetCounter[], now: string): Promise<BudgetCounting>;
  /** One transaction: gives a reserved message back (it was not answered). */
  release(chatbotId: number, counters: BudgetCounter[]): Promise<void>;
  /** Deletes the counters of periods that started before `before`; returns how many. */
  prune(before: string): Promise<number>;
}
