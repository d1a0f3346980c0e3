import { describe, expect, it } from "vitest";
import { chunkText, markdownSections } from "../../src/knowledge/chunking/index.js";
import { htmlToMarkdown } from "../../src/knowledge/loaders/html.js";
import { jsonToMarkdown } from "../../src/knowledge/loaders/json.js";

describe("markdownSections", () => {
  it("gives every section its heading path, ignoring # lines in code and front matter", () => {
    const md = [
      "---",
      "title: ignored",
      "---",
      "Preamble text.",
      "# Install",
      "Intro.",
      "## From npm",
      "```sh",
      "# a shell comment, not a heading",
      "npm i chatsvc",
      "```",
      "### Windows",
      "Use PowerShell.",
      "## From source",
      "Clone it.",
      "Usage",
      "=====",
      "Run it. <!-- hidden note -->",
    ].join("\n");
    expect(markdownSections(md)).toEqual([
      { headings: [], body: "Preamble text." },
      { headings: ["Install"], body: "Intro." },
      { headings: ["Install", "From npm"], body: "```sh\n# a shell comment, not a heading\nnpm i chatsvc\n```" },
      { headings: ["Install", "From npm", "Windows"], body: "Use PowerShell." },
      { headings: ["Install", "From source"], body: "Clone it." },
      { headings: ["Usage"], body: "Run it." },
    ]);
  });

  it("strips inline Markdown from headings and skips empty sections", () => {
    expect(markdownSections("# The `serve` command and [links](http://x)\n## Empty\n## **Bold** one\ntext")).toEqual([
      { headings: ["The serve command and links", "Bold one"], body: "text" },
    ]);
  });
});

describe("chunkText", () => {
  const sentences = (n: number, prefix = "S") => Array.from({ length: n }, (_, i) => `${prefix}${i} has a few words in it.`).join(" ");

  it("keeps chunks within the target size, cut at sentence ends, and never across headings", () => {
    const md = `# Alpha\n${sentences(40, "A")}\n\n# Beta\n${sentences(3, "B")}`;
    const chunks = chunkText("md", md, { size: 200, overlap: 0 });
    for (const c of chunks) {
      expect(c.content.length).toBeLessThanOrEqual(200);
      expect(c.content).toMatch(/^[AB]\d+ .*\.$/);
    }
    expect(chunks.filter((c) => c.heading === "Alpha").every((c) => !c.content.includes("B0"))).toBe(true);
    expect(chunks.at(-1)).toEqual({ heading: "Beta", content: sentences(3, "B") });
    // Every sentence is kept, in order.
    expect(chunks.filter((c) => c.heading === "Alpha").map((c) => c.content).join(" ")).toBe(sentences(40, "A"));
  });

  it("repeats whole trailing sentences up to the overlap", () => {
    const chunks = chunkText("txt", sentences(30), { size: 200, overlap: 60 });
    expect(chunks.length).toBeGreaterThan(3);
    for (let i = 1; i < chunks.length; i++) {
      const previous = chunks[i - 1]!.content;
      const current = chunks[i]!.content;
      // The longest start of this chunk that ends the previous one is the overlap.
      let carried = "";
      for (let n = Math.min(previous.length, current.length); n > 0; n--) {
        if (previous.endsWith(current.slice(0, n))) {
          carried = current.slice(0, n);
          break;
        }
      }
      expect(carried.length).toBeGreaterThan(0);
      expect(carried.length).toBeLessThanOrEqual(60);
      expect(carried).toMatch(/^S\d+ .*\.$/);
      expect(previous.endsWith(` ${carried}`)).toBe(true);
    }
  });

  it("cuts a sentence longer than the size at word boundaries, and unbroken text hard", () => {
    const long = `${"word ".repeat(100).trim()}.`;
    const chunks = chunkText("txt", long, { size: 120, overlap: 0 });
    expect(chunks.every((c) => c.content.length <= 120 && !c.content.startsWith(" "))).toBe(true);
    expect(chunks.map((c) => c.content).join(" ")).toBe(long);
    expect(chunkText("txt", "x".repeat(250), { size: 100, overlap: 0 }).map((c) => c.content.length)).toEqual([100, 100, 50]);
  });

  it("reads lists and tables line by line and keeps paragraph breaks", () => {
    const [chunk] = chunkText("md", "# Steps\nDo this first.\n\n- one\n- two\n\n| a | b |\n| 1 | 2 |", { size: 1000, overlap: 0 });
    expect(chunk).toEqual({ heading: "Steps", content: "Do this first.\n\n- one\n- two\n\n| a | b |\n| 1 | 2 |" });
  });

  it("treats plain text as one heading-less section and handles empty input", () => {
    expect(chunkText("txt", "# not a heading in txt", { size: 100, overlap: 0 })).toEqual([{ heading: "", content: "# not a heading in txt" }]);
    expect(chunkText("md", "  \n\n ", { size: 100, overlap: 0 })).toEqual([]);
  });
});

describe("HTML and JSON to Markdown", () => {
  it("keeps the article and drops scripts, styles, navigation and chrome", () => {
    const { title, markdown } = htmlToMarkdown(`<!doctype html><html><head><title>Help &amp; FAQ</title><style>p{color:red}</style>
      <script>document.write("<p>tracking</p>")</script></head><body><header><a href="/">Logo</a></header>
      <nav><ul><li>Home</li><li>Pricing</li></ul></nav><div role="navigation">Breadcrumbs</div>
      <main><h1>Refunds</h1><p>Money back   within 30&nbsp;days.</p><h2>Exceptions</h2><ul><li>Gift cards</li></ul>
      <pre>line 1\n  indented</pre><div aria-hidden="true">decoration</div></main>
      <aside>Related posts</aside><footer>© 2024</footer></body></html>`);
    expect(title).toBe("Help & FAQ");
    expect(markdown).toBe("# Refunds\n\nMoney back within 30 days.\n\n## Exceptions\n\n- Gift cards\n\n```\nline 1\n  indented\n```");
  });

  it("falls back to the whole body without <main>, and to the first h1 without <title>", () => {
    expect(htmlToMarkdown("<body><nav>Menu</nav><h1>Guide</h1><p>Text <b>bold</b>.</p></body>")).toEqual({ title: "Guide", markdown: "# Guide\n\nText bold." });
  });

  it("turns JSON records into titled sections of key: value lines", () => {
    expect(jsonToMarkdown([{ question: "Refunds?", answer: "Within 30 days.", tags: ["a", "b"], meta: { lang: "en" } }])).toBe(
      "## Refunds?\n\nquestion: Refunds?\nanswer: Within 30 days.\ntags: a, b\nmeta.lang: en",
    );
    expect(jsonToMarkdown({ shipping: { days: 3 }, returns: "30 days" })).toBe("## shipping\n\ndays: 3\n\n## returns\n\n30 days");
  });
});
