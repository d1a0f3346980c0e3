import fc from "fast-check";
import purify from "isomorphic-dompurify";
import { describe, expect, it } from "vitest";
import { renderPlainMarkdown } from "../../src/render/plain-markdown.js";
import { loadHtmlRenderer, openInNewTab, SANITIZE } from "../../src/render/render-html.js";
import { executableParts, OWASP_PAYLOADS } from "../fixtures/xss.js";

const sanitised = await loadHtmlRenderer();

/**
 * What the sanitiser removes from HTML, and what it leaves: for the plain path to be
 * right, it must remove nothing (bar the link attributes its own hook puts back) and
 * leave exactly what sanitising the Markdown's HTML gives.
 */
function sanitise(html: string): { html: string; removed: string[] } {
  // The product's hook, which puts back the attributes the allow-list does not name.
  purify.addHook("afterSanitizeAttributes", openInNewTab);
  let out: string;
  try {
    out = purify.sanitize(html, SANITIZE) as string;
  } finally {
    purify.removeHook("afterSanitizeAttributes", openInNewTab);
  }
  const removed = purify.removed
    .map((r) => ("element" in r ? `<${r.element.nodeName}>` : `${r.from.nodeName}[${r.attribute?.name}=${r.attribute?.value}]`))
    .filter((r) => r !== "A[target=_blank]" && r !== "A[rel=noopener noreferrer]");
  return { html: out.trim(), removed };
}

/** Renders on the plain path when it takes the Markdown; checks it against the sanitiser's path. */
function expectSameAsSanitised(markdown: string): boolean {
  const plain = renderPlainMarkdown(markdown);
  if (plain === undefined) return false;
  const { html, removed } = sanitise(plain);
  expect(removed, `${JSON.stringify(markdown)} -> ${plain}`).toEqual([]);
  expect(html, JSON.stringify(markdown)).toBe(plain);
  expect(plain, JSON.stringify(markdown)).toBe(sanitised(markdown));
  expect(executableParts(plain)).toEqual([]);
  return true;
}

const PLAIN_REPLIES = [
  "**Hi**, see [docs](https://example.com/docs?a=1&b=2) and run `chatsvc serve`.",
  "# Install\n\nRun this:\n\n```sh\nnpm install chatsvc\nnpx chatsvc serve\n```\n\nThen open `http://localhost:3000`.",
  "3. third\n4. fourth\n\n- one\n- two\n\n  nested paragraph\n\n> quoted _text_ ~~gone~~",
  "| plan | price |\n|:-----|------:|\n| Pro | $9 |\n| Team | `$29` |",
  "Line one  \nline two\n\n---\n\nwww.example.com, help@example.com, <https://example.com/x>, [call us](tel:+15551234) or [mail](mailto:a@b.test).",
  "Quotes \" and ' and &amp; a < b > c and \\*not emphasis\\*, a\u00a0b.",
  "Use `<script>` tags in `<head>`, or a ```` ``` ```` fence: `</style>` `-->`.",
  "    indented code <b>\n\nHeading\n=======\n\nSub\n---",
];

describe("plain Markdown", () => {
  it("renders replies without raw HTML as the sanitiser would, links opening in a new tab and code without its language tag", () => {
    for (const markdown of PLAIN_REPLIES) expect(expectSameAsSanitised(markdown), markdown).toBe(true);
    expect(renderPlainMarkdown("```sh\nnpm i\n```")).toBe("<pre><code>npm i\n</code></pre>");
    expect(renderPlainMarkdown("[docs](https://example.com)")).toBe('<p><a href="https://example.com" target="_blank" rel="noopener noreferrer">docs</a></p>');
    // Kept by both paths now that the sanitiser no longer tests them as URLs.
    expect(renderPlainMarkdown("3. c\n4. d")).toBe('<ol start="3">\n<li>c</li>\n<li>d</li>\n</ol>');
    expect(sanitised("3. c\n4. d\n\n<b>x</b>")).toContain('<ol start="3">');
  });

  it("leaves raw HTML, images, task lists, titled links and links the sanitiser refuses to the sanitiser", () => {
    for (const markdown of [
      "<b>bold</b>",
      "text <img src=x onerror=alert(1)>",
      "![pixel](https://t.example/p.gif)",
      "- [ ] task",
      '[docs](https://example.com "title")',
      "[relative](/docs)",
      "[js](javascript:alert(1))",
      "[js](JAVASCRIPT:alert(1))",
      "[data](data:text/html;base64,PHNjcmlwdD4=)",
      // A reference in a URL means its character inside the attribute: `&quot;` must never become a quote there.
      "[x](https://a.test/&quot;onmouseover=alert(1))",
      "[x](https://a.test/&#34;onmouseover=alert(1))",
      "a <!-- comment --> b",
      "&copy; 2026",
      "nul \u0000 here",
      "*a".repeat(200),
      "word ".repeat(2_000),
    ]) {
      expect(renderPlainMarkdown(markdown), markdown).toBeUndefined();
    }
  });

  it("renders every XSS payload, bare, as a link target, in code and in a fence, either as the sanitiser would or not at all", () => {
    const inputs = OWASP_PAYLOADS.flatMap((p) => [p, `[x](${p})`, `see ${p} here`, `\`${p.replace(/`/g, "")}\``, "```\n" + p + "\n```", `- ${p}\n- **${p}**`]);
    let plain = 0;
    for (const markdown of inputs) if (expectSameAsSanitised(markdown)) plain++;
    // Payloads in code spans and fences are plain Markdown; the rest are raw HTML.
    expect(plain).toBeGreaterThan(OWASP_PAYLOADS.length);
  });

  it("matches the sanitiser on generated Markdown mixing every construct with markup characters", () => {
    const piece = fc.constantFrom(
      "word", "**bold**", "_em_", "~~del~~", "`code`", "[link](https://example.com/a?b=1&c=2)", "[rel](/x)", "https://example.com",
      "<b>", "</i>", "<!--", "-->", "&amp;", "&", "<", ">", "\"", "'", "*", "_", "`", "[", "]", "(", ")", "\\", "|", "#", "!", "~",
      "javascript:alert(1)", "mailto:a@b.test", "[q](https://example.com/&quot;x=1)", "[q](https://example.com/it's)", "[q](https://example.com/\"x)", "[q](<https://example.com/a b\">)",
      "[q](https://example.com/&#x22;x)", "[q](https://example.com/%22x)", "[q](mailto:a\"b@c.test)", "<https://example.com/\"x>", "www.example.com/\"x", "a\"b@c.test",
      "```\"onx=1\n", "[q](https://example.com/\u00a0x)", "&quot;", "&#39;", "&copy;", "&#0;", "&#x41;", "\u0000", "\u000c", "\u007f", "\ufffe", "\ud800", "\r", "\r\n", "\t", "\n", "\n\n", "\n- ", "\n1. ", "\n> ", "\n```\n", "\n    ", "\n| a | b |\n|---|---|\n| ", "  \n", "\u00a0", "é",
    );
    let plain = 0;
    /*
     * Runs enough that each break of the plain path tried (no `&nbsp;` or quote serialisation, no check for
     * other character references, `&#39;` left in a tag) failed well within them, every time tried; each run
     * costs up to four jsdom sanitises, so more runs mostly repeat paths already taken.
     */
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        if (expectSameAsSanitised(pieces.join(" "))) plain++;
        if (expectSameAsSanitised(pieces.join(""))) plain++;
      }),
      { numRuns: 400 },
    );
    // Many mixes hold raw HTML or an entity; over half are plain, or the property would say little.
    expect(plain).toBeGreaterThan(360);
  }, 120_000); // Hundreds of sanitiser runs on jsdom: quick on a quiet machine, far slower on a loaded one.
});
