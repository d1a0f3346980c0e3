import type { DayCounts } from "./storage/analytics.js";

/** A day with nothing counted. */
export const emptyDay = (day: string): DayCounts => ({
  day,
  conversations: 0,
  visitor_messages: 0,
  answered: 0,
  cannot_answer: 0,
  good_ratings: 0,
  bad_ratings: 0,
  leads: 0,
  handoffs: 0,
});

/**
 * Merges per-day rows that each carry some of the counts (one query per table)
 * into one row per day, oldest first. Counts arrive as numbers or, from
 * PostgreSQL's bigint sums, numeric strings.
 *
 * @example
 * mergeDays([{ day: "2025-01-02", conversations: 3 }], [{ day: "2025-01-02", leads: "1" }]) // [{ day: "2025-01-02", conversations: 3, leads: 1, ...zeros }]
 */
export function mergeDays(...parts: Array<Array<{ day: string } & Partial<Record<keyof DayCounts, unknown>>>>): DayCounts[] {
  const days = new Map<string, DayCounts>();
  for (const rows of parts) {
    for (const row of rows) {
      const merged = days.get(row.day) ?? emptyDay(row.day);
      for (const [key, value] of Object.entries(row)) if (key !== "day" && value !== null) (merged as unknown as Record<string, number>)[key] = Number(value);
      days.set(row.day, merged);
    }
  }
  return [...days.values()].sort((a, b) => (a.day < b.day ? -1 : 1));
}
