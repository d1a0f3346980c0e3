import { Parser } from "htmlparser2";

export interface HtmlText {
  /** `<title>`, else the first `<h1>`, else empty. */
  title: string;
  /** Readable text as Markdown: headings as `#`, list items as `-`, code in fences. */
  markdown: string;
}

// Content never read by visitors, and page chrome around the article.
const SKIP = new Set(["script", "style", "noscript", "template", "svg", "math", "nav", "footer", "aside", "form", "button", "select", "iframe", "canvas", "object", "dialog"]);
const CHROME_ROLES = new Set(["navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar"]);
const BLOCK = new Set([
  "p", "div", "section", "article", "main", "header", "ul", "ol", "dl", "dt", "dd", "table", "thead", "tbody", "tfoot",
  "blockquote", "figure", "figcaption", "hr", "address", "details", "summary", "body", "html",
]);

/**
 * Readable Markdown from an HTML page: drops scripts, styles, navigation and
 * other chrome; when the page has `<main>` or `<article>`, keeps only that.
 * htmlparser2 is used for its forgiving tokenizer and entity decoding, which
 * hand-written regexes get wrong on real pages.
 *
 * @example
 * htmlToMarkdown("<title>Help</title><nav>Home</nav><h1>Refunds</h1><p>30 days.</p>").markdown;
 * // "# Refunds\n\n30 days."
 */
export function htmlToMarkdown(html: string): HtmlText {
  const all: string[] = [];
  const main: string[] = [];
  let title = "";
  let firstH1 = "";
  let inTitle = false;
  let h1Text: string | null = null;
  let skipDepth = 0;
  let mainDepth = 0;
  let preDepth = 0;
  // Tag names whose close ends a skip or main region, as a stack (HTML nests them).
  const stack: { name: string; skip: boolean; main: boolean }[] = [];

  const write = (s: string) => {
    if (skipDepth > 0) return;
    all.push(s);
    if (mainDepth > 0) main.push(s);
  };

  const parser = new Parser(
    {
      onopentag(name, attribs) {
        const role = attribs.role?.toLowerCase() ?? "";
        const skip = SKIP.has(name) || CHROME_ROLES.has(role) || attribs["aria-hidden"] === "true" || "hidden" in attribs || (name === "header" && mainDepth === 0);
        const isMain = name === "main" || name === "article" || role === "main";
        stack.push({ name, skip, main: isMain });
        if (skip) skipDepth++;
        if (isMain) mainDepth++;
        if (name === "title") inTitle = true;
        if (/^h[1-6]$/.test(name)) {
          write(`\n\n${"#".repeat(Number(name[1]))} `);
          if (name === "h1" && !firstH1) h1Text = "";
        } else if (name === "li") write("\n- ");
        else if (name === "br" || name === "tr") write("\n");
        else if (name === "pre") {
          preDepth++;
          write("\n\n```\n");
        } else if (name === "td" || name === "th") write(" | ");
        else if (BLOCK.has(name)) write("\n\n");
        else if (name === "img" && attribs.alt) write(` ${attribs.alt} `);
      },
      ontext(text) {
        if (inTitle) {
          title += text;
          return;
        }
        if (h1Text !== null) h1Text += text;
        write(preDepth > 0 ? text : text.replace(/\s+/g, " "));
      },
      onclosetag(name) {
        if (name === "title") inTitle = false;
        if (name === "h1" && h1Text !== null) {
          firstH1 ||= h1Text.replace(/\s+/g, " ").trim();
          h1Text = null;
        }
        if (/^h[1-6]$/.test(name)) write("\n\n");
        else if (name === "pre") {
          write("\n```\n\n");
          preDepth = Math.max(0, preDepth - 1);
        } else if (BLOCK.has(name)) write("\n\n");
        // Pop to the matching open tag; implied closes keep the stack consistent.
        for (let i = stack.length - 1; i >= 0; i--) {
          if (stack[i]!.name !== name) continue;
          for (const entry of stack.splice(i)) {
            if (entry.skip) skipDepth--;
            if (entry.main) mainDepth--;
          }
          break;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, recognizeSelfClosing: true },
  );
  parser.write(html);
  parser.end();

  const body = main.join("").trim() ? main : all;
  return { title: title.replace(/\s+/g, " ").trim() || firstH1, markdown: tidy(body.join("")) };
}

function tidy(text: string): string {
  let inFence = false;
  const lines = text.split("\n").map((line) => {
    if (line.trimStart().startsWith("```")) inFence = !inFence;
    // Whitespace collapsing leaves a space at line starts; code keeps its indentation.
    return inFence ? line.trimEnd() : line.replace(/^[ \t\u00a0]+|[ \t\u00a0]+$/g, "");
  });
  return lines
    .join("\n")
    .replace(/^#{1,6}$/gm, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
