import { z } from "zod";
import { ChatsvcError } from "../core/errors.js";
import { pageQueryShape } from "../core/pagination.js";
import { oneOf } from "../core/validation.js";

export type Interval = "day" | "week";

/** The longest report: a year of days (or as many weeks). */
export const MAX_BUCKETS = 366;
/** Without `since`, a report covers this many UTC days up to `until`'s day. */
export const DEFAULT_DAYS = 30;

const DAY_MS = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
// A full ISO 8601 date or date-time; `Date.parse` alone accepts too many shapes.
const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

const instant = (field: string) =>
  z
    .string({ error: `The ${field} field must be an ISO 8601 date or date-time.` })
    .refine((s) => ISO.test(s.trim()) && !Number.isNaN(Date.parse(s.trim())), { message: `The ${field} field must be an ISO 8601 date or date-time.` })
    .meta({ description: "ISO 8601 date or date-time, e.g. 2025-01-31 or 2025-01-31T12:00:00Z (UTC when no offset is given)" });

/** `chatbot`, `since`, `until` of every analytics route. */
export const scopeShape = {
  chatbot: pageQueryShape.chatbot,
  since: instant("since").optional(),
  until: instant("until").optional(),
};

/** Query of `GET /analytics`. */
export const overviewQuerySchema = z.object(
  {
    ...scopeShape,
    interval: oneOf("interval", ["day", "week"]).meta({ description: "Bucket size: UTC days, or weeks from Monday (default day)" }).optional(),
  },
  { error: "The query must be an object." },
);

export interface ResolvedRange {
  /** ISO times, both inclusive. */
  since: string;
  until: string;
}

// `Date.parse` reads a date-time without an offset as local time; reports are in UTC.
const toMs = (value: string) => {
  const t = value.trim();
  return Date.parse(/T[^Z+-]*$/.test(t) ? `${t}Z` : t);
};
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const startOfDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

/**
 * The time range a report covers. A date-only `since` starts at that day's
 * 00:00 UTC, a date-only `until` ends at that day's last millisecond, so
 * `since=2025-01-01&until=2025-01-31` is all of January. Defaults: `until` now,
 * `since` the start of the UTC day {@link DEFAULT_DAYS} - 1 days before `until`'s.
 * A reversed range is a 422.
 */
export function resolveRange(q: { since?: string; until?: string }, now = Date.now()): ResolvedRange {
  const until = q.until === undefined ? now : DATE.test(q.until.trim()) ? toMs(q.until) + DAY_MS - 1 : toMs(q.until);
  const since = q.since === undefined ? startOfDay(until) - (DEFAULT_DAYS - 1) * DAY_MS : toMs(q.since);
  if (since > until) throw ChatsvcError.validation({ since: ["The since field must be a date before until."] });
  return { since: new Date(since).toISOString(), until: new Date(until).toISOString() };
}

export interface Bucket {
  /** First UTC day of the bucket, `YYYY-MM-DD`. */
  start: string;
  /** Last UTC day of the bucket (inclusive). */
  end: string;
}

/**
 * The buckets covering a range: every UTC day from `since`'s to `until`'s, or
 * every week (Monday to Sunday) containing one of them. The first and last
 * bucket may reach outside the range; only records inside it are counted.
 * More than {@link MAX_BUCKETS} is a 422.
 *
 * @example
 * buckets({ since: "2025-01-01T00:00:00.000Z", until: "2025-01-09T12:00:00.000Z" }, "week")
 * // [{ start: "2024-12-30", end: "2025-01-05" }, { start: "2025-01-06", end: "2025-01-12" }]
 */
export function buckets(range: ResolvedRange, interval: Interval): Bucket[] {
  let first = startOfDay(Date.parse(range.since));
  const last = startOfDay(Date.parse(range.until));
  const step = interval === "week" ? 7 * DAY_MS : DAY_MS;
  // 1970-01-01 was a Thursday: Monday is 3 days before it.
  if (interval === "week") first -= (((first / DAY_MS + 3) % 7) + 7) % 7 * DAY_MS;
  const count = Math.floor((last - first) / step) + 1;
  if (count > MAX_BUCKETS) {
    throw ChatsvcError.validation({ since: [`The range from since to until spans ${count} ${interval}s; at most ${MAX_BUCKETS} buckets are allowed.`] });
  }
  return Array.from({ length: count }, (_, i) => ({ start: dayOf(first + i * step), end: dayOf(first + i * step + step - DAY_MS) }));
}
