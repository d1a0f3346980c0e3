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

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** How a range splits into whole UTC days (read from per-day counters) and the partial days at its ends. */
export interface DaySplit {
  /** First and last whole day inside the range (`YYYY-MM-DD`), or null when no day is wholly inside. */
  days: { first: string; last: string } | null;
  /** The rest of the range (ISO times, both inclusive): at most two pieces, each within one day. */
  edges: Array<{ since: string; until: string }>;
}

/**
 * Splits an inclusive range of ISO times (millisecond precision, as stored) into
 * the UTC days it covers entirely and the partial days at either end, so
 * counters kept per day answer the middle and a query over the rows answers
 * the edges: together exactly the rows whose time is in the range.
 *
 * @example
 * splitDays("2025-01-01T12:00:00.000Z", "2025-01-04T23:59:59.999Z")
 * // { days: { first: "2025-01-02", last: "2025-01-04" }, edges: [{ since: "2025-01-01T12:00:00.000Z", until: "2025-01-01T23:59:59.999Z" }] }
 */
export function splitDays(since: string, until: string): DaySplit {
  const from = Date.parse(since);
  const to = Date.parse(until);
  const first = Math.ceil(from / DAY_MS) * DAY_MS;
  const end = Math.floor((to + 1) / DAY_MS) * DAY_MS;
  if (end - first < DAY_MS) return { days: null, edges: [{ since, until }] };
  const edges: DaySplit["edges"] = [];
  if (from < first) edges.push({ since, until: new Date(first - 1).toISOString() });
  if (to >= end) edges.push({ since: new Date(end).toISOString(), until });
  return { days: { first: dayOf(first), last: dayOf(end - DAY_MS) }, edges };
}
