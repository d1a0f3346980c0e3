/** A run of text under one heading path. */
export interface Section {
  /** Heading path from the top, e.g. `["Install", "From npm"]`; empty before the first heading. */
  headings: string[];
  body: string;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;

/**
 * Splits Markdown into sections at ATX (`## x`) and setext headings, ignoring
 * `#` lines inside fenced code, dropping YAML front matter and HTML comments.
 *
 * @example
 * markdownSections("# Install\nRun npm.\n## From npm\nnpm i chatsvc");
 * // [{headings: ["Install"], body: "Run npm."}, {headings: ["Install", "From npm"], body: "npm i chatsvc"}]
 */
export function markdownSections(markdown: string): Section[] {
  const text = markdown.replace(/\r\n?/g, "\n").replace(/^---\n[\s\S]*?\n---\n/, "").replace(/<!--[\s\S]*?-->/g, "");
  const sections: Section[] = [];
  const stack: string[] = [];
  let lines: string[] = [];
  let fence: string | null = null;

  const flush = () => {
    const body = lines.join("\n").trim();
    if (body) sections.push({ headings: stack.filter(Boolean), body });
    lines = [];
  };
  const open = (level: number, title: string) => {
    flush();
    stack.length = level - 1;
    for (let i = 0; i < level - 1; i++) stack[i] ??= "";
    stack[level - 1] = inlineText(title);
  };

  for (const line of text.split("\n")) {
    const fenceMatch = FENCE.exec(line);
    if (fence !== null) {
      if (fenceMatch && fenceMatch[1]![0] === fence[0] && fenceMatch[1]!.length >= fence.length) fence = null;
      lines.push(line);
      continue;
    }
    if (fenceMatch) {
      fence = fenceMatch[1]!;
      lines.push(line);
      continue;
    }
    const atx = ATX.exec(line);
    if (atx) {
      open(atx[1]!.length, atx[2] ?? "");
      continue;
    }
    const previous = lines[lines.length - 1];
    if (SETEXT.test(line) && previous !== undefined && previous.trim() !== "" && !/^\s*([-*+]|\d+[.)]|>|\|)/.test(previous)) {
      lines.pop();
      open(line.trim()[0] === "=" ? 1 : 2, previous.trim());
      continue;
    }
    lines.push(line);
  }
  flush();
  return sections;
}

/** Heading text without inline Markdown: links keep their text, code and emphasis marks go. */
export function inlineText(s: string): string {
  return s
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*_]+/g, "")
    .replace(/\s+/g, " ")
    .trim();
}
