import { ChatsvcError } from "../core/errors.js";

/** Prints exactly one JSON document (for `--json`). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A plain text table; columns sized to their widest cell. */
export function printTable(rows: Record<string, unknown>[], columns: string[]): void {
  if (rows.length === 0) {
    process.stdout.write("(none)\n");
    return;
  }
  const cell = (v: unknown) => (v === null || v === undefined ? "-" : typeof v === "object" ? JSON.stringify(v) : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  process.stdout.write(`${line(columns)}\n${rows.map((r) => line(columns.map((c) => cell(r[c])))).join("\n")}\n`);
}

/** Key: value lines for one record. */
export function printRecord(record: Record<string, unknown>): void {
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  for (const [k, v] of Object.entries(record)) {
    process.stdout.write(`${k.padEnd(width)}  ${v === null || v === undefined ? "-" : typeof v === "object" ? JSON.stringify(v) : String(v)}\n`);
  }
}

/** The one-line message (plus field errors) a failed command prints on stderr. */
export function formatError(error: unknown): string {
  if (ChatsvcError.isError(error)) {
    const fields = Object.entries(error.errors ?? {})
      .filter(([, messages]) => !messages.includes(error.message) || messages.length > 1)
      .map(([field, messages]) => `  ${field}: ${messages.join(" ")}`);
    return [`error: ${error.message}`, ...fields].join("\n");
  }
  return `error: ${error instanceof Error ? error.message : String(error)}`;
}

/** Parses a numeric id argument, refusing anything else. */
export function parseId(value: string, what = "id"): number {
  if (!/^[1-9]\d{0,15}$/.test(value)) throw new ChatsvcError(422, `${what} must be a positive integer, got "${value}"`);
  return Number(value);
}

/** Parses a non-negative integer option. */
export function parseCount(value: string, what: string): number {
  if (!/^\d{1,15}$/.test(value)) throw new ChatsvcError(422, `${what} must be a non-negative integer, got "${value}"`);
  return Number(value);
}
