/** An RFC 4180 reader for the tests: records of fields, quotes undone; records end with CRLF. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"' && field === "") {
      // A quoted field: runs to the next lone quote.
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) throw new Error("unterminated quoted field");
        field += text.slice(i, q);
        if (text[q + 1] === '"') {
          field += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      if (i < text.length && text[i] !== "," && !text.startsWith("\r\n", i)) throw new Error(`text after a quoted field at ${i}`);
    } else if (ch === ",") {
      record.push(field);
      field = "";
      i++;
    } else if (text.startsWith("\r\n", i)) {
      record.push(field);
      records.push(record);
      record = [];
      field = "";
      i += 2;
    } else if (ch === "\r" || ch === "\n" || ch === '"') {
      throw new Error(`bare ${JSON.stringify(ch)} in an unquoted field at ${i}`);
    } else {
      field += ch;
      i++;
    }
  }
  if (field !== "" || record.length > 0) throw new Error("the last record does not end with CRLF");
  return records;
}

/** Records as objects keyed by the header row. */
export function csvObjects(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  return rows.map((row) => {
    if (row.length !== header!.length) throw new Error(`a record has ${row.length} fields, the header ${header!.length}`);
    return Object.fromEntries(header!.map((name, i) => [name, row[i]!]));
  });
}
