/** Current time as the ISO 8601 UTC string every table and response uses. */
export function nowIso(): string {
  return new Date().toISOString();
}

/** UTC calendar month (`YYYY-MM`) of a date: the unit of the credit ledger. */
export function utcMonth(date = new Date()): string {
  return date.toISOString().slice(0, 7);
}

/** Where time-driven parts (retention) read the time; tests pass their own instead of waiting. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
