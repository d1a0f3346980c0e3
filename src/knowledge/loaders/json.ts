/**
 * Markdown from JSON: each element of a top-level array (or each top-level key
 * of an object) becomes a section, headed by its `title`/`name`/`question`
 * field or key; leaves become `path: value` lines.
 *
 * @example
 * jsonToMarkdown([{ question: "Refunds?", answer: "Within 30 days." }]);
 * // "## Refunds?\n\nquestion: Refunds?\nanswer: Within 30 days."
 */
export function jsonToMarkdown(value: unknown): string {
  if (Array.isArray(value)) return value.map((item, i) => section(headingOf(item) ?? `Item ${i + 1}`, item)).join("\n\n");
  if (value !== null && typeof value === "object") {
    return Object.entries(value as Record<string, unknown>)
      .map(([key, item]) => section(headingOf(item) ?? key, item))
      .join("\n\n");
  }
  return String(value);
}

const TITLE_FIELDS = ["title", "name", "question", "heading", "subject", "label"];

function headingOf(item: unknown): string | undefined {
  if (item === null || typeof item !== "object" || Array.isArray(item)) return undefined;
  const record = item as Record<string, unknown>;
  const field = TITLE_FIELDS.find((f) => typeof record[f] === "string" && (record[f] as string).trim());
  return field ? (record[field] as string).trim().replace(/\s+/g, " ") : undefined;
}

function section(heading: string, item: unknown): string {
  const lines: string[] = [];
  flatten(item, "", lines);
  return `## ${heading}\n\n${lines.join("\n")}`;
}

function flatten(value: unknown, path: string, lines: string[]): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== "object")) {
      if (value.length > 0) lines.push(`${path || "values"}: ${value.join(", ")}`);
      return;
    }
    value.forEach((v, i) => flatten(v, `${path}[${i}]`, lines));
    return;
  }
  if (typeof value === "object") {
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) flatten(v, path ? `${path}.${key}` : key, lines);
    return;
  }
  lines.push(path ? `${path}: ${String(value)}` : String(value));
}
