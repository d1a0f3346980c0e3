/*
 * CSV as RFC 4180 writes it: fields separated by commas, records by CRLF, a
 * field holding a comma, a double quote, CR or LF enclosed in double quotes
 * with its quotes doubled. Hand-written: it is these few lines, and a CSV
 * library would add a dependency for nothing more.
 */

/** What a spreadsheet reads as the start of a formula (OWASP "CSV injection"), tab and CR included. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A cell made safe to open in a spreadsheet: text starting with `=`, `+`,
 * `-`, `@`, tab or CR gets a leading `'`, so Excel, LibreOffice and Google
 * Sheets show it as text instead of running it as a formula. Visitors write
 * these cells, so an export must not turn their text into code on an
 * operator's machine. The cost: a value such as `+44 20 7946 0000` reads
 * `'+44 20 7946 0000`.
 *
 * @example
 * neutraliseFormula("=HYPERLINK(\"http://evil\")") // "'=HYPERLINK(\"http://evil\")"
 */
export function neutraliseFormula(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** One field: null and undefined are empty; quoted when RFC 4180 requires it. */
export function csvField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return "";
  const text = typeof value === "string" ? neutraliseFormula(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * One record, CRLF-terminated.
 *
 * @example
 * csvRow(["a,b", 'say "hi"', null]) // '"a,b","say ""hi""",\r\n'
 */
export function csvRow(fields: readonly (string | number | boolean | null | undefined)[]): string {
  return `${fields.map(csvField).join(",")}\r\n`;
}
