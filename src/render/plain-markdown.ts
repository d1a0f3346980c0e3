import { Marked, Renderer, type Token, type Tokens } from "marked";
import { ALLOWED_URI, LINK_ATTRIBUTES } from "./render-html.js";

/*
 * Most replies are plain Markdown: paragraphs, emphasis, lists, code, tables and
 * web links, with no raw HTML. For those, the HTML marked writes is already what
 * sanitising would leave: every character of the reply reaches it through marked's
 * escaping, the only elements are the ones these token types produce (all on the
 * sanitiser's allow-list), and the only attribute that carries reply text is a
 * link's `href`, checked here against the sanitiser's own URL pattern. So they skip
 * jsdom and DOMPurify, and the hop to the render worker (test/render/plain-markdown.test.ts
 * checks that the sanitiser removes nothing from this HTML and that both paths give the
 * same bytes, over the XSS payloads and generated Markdown). Anything else (raw HTML,
 * images, task lists, link titles, other URLs) goes to the sanitiser as before.
 */
const PLAIN = new Set([
  "space", "paragraph", "text", "escape", "strong", "em", "del", "codespan", "br", "code", "heading", "hr",
  "blockquote", "list", "table", "link",
]);

/*
 * Bounds on what this thread renders: marked's time grows quadratically with runs of
 * unmatched delimiters and with nested quotes, and a visitor can ask a model to write
 * such a reply. Within these bounds the worst inputs measured take a few milliseconds;
 * longer or busier replies go to the worker, whose time limit covers any input.
 */
const MAX_LENGTH = 8_192;
const MAX_DELIMITERS = 160;
const DELIMITERS = /[*_`[\]<>!~\\]/g;
// Characters an HTML parser drops or replaces (NUL, say), so that the sanitiser's output differs.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

const NEW_TAB = LINK_ATTRIBUTES.map(([name, value]) => ` ${name}="${value}"`).join("");

const marked = new Marked({ gfm: true, async: false });
marked.use({
  renderer: {
    // The sanitiser drops `class`, so the language tag is left out rather than written and removed.
    code(token) {
      return Renderer.prototype.code.call(this, { ...token, lang: undefined });
    },
    // What the sanitiser's hook adds to every link; plain links have no title, so the start tag ends at the first `">`.
    link(token) {
      const html = Renderer.prototype.link.call(this, token);
      const end = html.indexOf('">');
      return `${html.slice(0, end + 1)}${NEW_TAB}${html.slice(end + 1)}`;
    },
  },
});

/**
 * The HTML of a reply that is plain Markdown (see above), or `undefined` when the
 * reply needs the sanitiser.
 *
 * @example
 * renderPlainMarkdown("**Hi**, see [docs](https://example.com)");
 * // '<p><strong>Hi</strong>, see <a href="https://example.com" target="_blank" rel="noopener noreferrer">docs</a></p>'
 * renderPlainMarkdown("<b>hi</b>"); // undefined
 */
export function renderPlainMarkdown(markdown: string): string | undefined {
  if (markdown.length > MAX_LENGTH || (markdown.match(DELIMITERS)?.length ?? 0) > MAX_DELIMITERS || CONTROL.test(markdown)) return undefined;
  try {
    const tokens = marked.lexer(markdown);
    if (!plain(tokens)) return undefined;
    return asSerialised((marked.parser(tokens) as string).trim());
  } catch {
    // Left to the worker, which answers whatever marked cannot render as escaped text.
    return undefined;
  }
}

/*
 * The bytes the sanitiser's path gives for the same reply, which serialises a parsed
 * document: quotes in text unescaped, a no-break space as `&nbsp;`, an apostrophe in an
 * attribute unescaped. Any other character reference (`&copy;` kept from the reply)
 * would come out decoded there, so such a reply is left to it. Tags are matched whole
 * (marked escapes `<` and `>` everywhere else, and URLs are percent-encoded) and only
 * their `&#39;` changes: a `&quot;` inside an attribute must stay one, or it would end
 * the value.
 */
const OTHER_REFERENCE = /&(?!(?:amp|lt|gt|quot|#39);)/;
const SERIALISED: Record<string, string> = { "&quot;": '"', "&#39;": "'", "\u00a0": "&nbsp;" };

function asSerialised(html: string): string | undefined {
  if (OTHER_REFERENCE.test(html)) return undefined;
  return html.replace(/(<[^>]*>)|&quot;|&#39;|\u00a0/g, (found, tag: string | undefined) => (tag ? tag.replace(/&#39;/g, "'") : SERIALISED[found]!));
}

function plain(tokens: Token[]): boolean {
  for (const token of tokens) {
    if (!PLAIN.has(token.type)) return false;
    switch (token.type) {
      case "link":
        if (token.title || !linkAllowed(token.href)) return false;
        break;
      case "list":
        if (!(token as Tokens.List).items.every((item) => !item.task && plain(item.tokens))) return false;
        break;
      case "table": {
        const table = token as Tokens.Table;
        if (!table.header.every((cell) => plain(cell.tokens)) || !table.rows.every((row) => row.every((cell) => plain(cell.tokens)))) return false;
        break;
      }
    }
    if ("tokens" in token && token.tokens && !plain(token.tokens)) return false;
  }
  return true;
}

/**
 * The URL marked writes (its `cleanUrl`), tested as the sanitiser tests an `href`. A
 * character reference in it (`&quot;`) reaches the attribute as written and means its
 * character there: such links are left to the sanitiser.
 */
function linkAllowed(href: string): boolean {
  if (/&#?\w+;/.test(href)) return false;
  let written: string;
  try {
    written = encodeURI(href).replace(/%25/g, "%");
  } catch {
    return false;
  }
  return ALLOWED_URI.test(written);
}
