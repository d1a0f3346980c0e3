/** Formats a figure for the table: integers with separators, small values with 2-3 significant digits. */
export function fmt(value, unit = "") {
  if (value === null || value === undefined || Number.isNaN(value)) return "n/a";
  if (typeof value === "string") return value;
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  const text = value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });
  return unit ? `${text} ${unit}` : text;
}

/**
 * One table row. `pass` is true/false when a target applies, null when the
 * figure is informational or a baseline.
 */
export function row({ id, figure, value, unit = "", baseline, baselineUnit = unit, ratio, target = "", pass = null, note }) {
  return { id, figure, value: value ?? null, unit, baseline: baseline ?? null, baselineUnit, ratio: ratio ?? null, target, pass, ...(note && { note }) };
}

/** A row saying why a figure could not be measured, instead of failing the run. */
export function unavailable(id, figure, reason, target = "") {
  return { id, figure, value: null, unit: "", baseline: null, ratio: null, target, pass: null, note: `n/a: ${reason}` };
}

const cell = (s) => String(s).replace(/\|/g, "\\|").replace(/\n/g, " ");

/** The Markdown table: figure, value, baseline, ratio, target, pass/fail. */
export function toMarkdown(rows) {
  const lines = ["| # | figure | value | baseline | ratio | target | result |", "|---|---|---|---|---|---|---|"];
  for (const r of rows) {
    const result = r.note?.startsWith("n/a") ? r.note : r.pass === true ? "pass" : r.pass === false ? "**FAIL**" : "";
    lines.push(
      `| ${cell(r.id)} | ${cell(r.figure)} | ${fmt(r.value, r.unit)} | ${r.baseline === null ? "" : cell(typeof r.baseline === "object" ? `${fmt(r.baseline.value, r.baselineUnit)} (${r.baseline.label})` : fmt(r.baseline, r.baselineUnit))} | ${r.ratio === null ? "" : `${fmt(r.ratio)}x`} | ${cell(r.target)} | ${cell(result)}${r.note && !r.note.startsWith("n/a") ? ` ${cell(r.note)}` : ""} |`,
    );
  }
  return lines.join("\n");
}
