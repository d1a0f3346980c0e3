const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Milliseconds of a duration written for people: a number of milliseconds, or
 * a number with a unit (`500ms`, `90s`, `30m`, `24h`, `7d`). Undefined when
 * the text is not one.
 *
 * @example
 * parseDuration("24h"); // 86_400_000
 */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(value);
  if (!match) return undefined;
  return Math.round(Number(match[1]) * UNITS[(match[2] ?? "ms").toLowerCase()]!);
}
