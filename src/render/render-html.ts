import type { Config } from "isomorphic-dompurify";

/** Where a reply's links may point: absolute web links, mail and phone only (relative URLs mean nothing inside the integrator's page). */
export const ALLOWED_URI = /^(?:https?:|mailto:|tel:)/i;

/*
 * What a reply may contain. An allow-list, so anything new in HTML stays out:
 * no style (hiding or overlaying content), no forms, no SVG/MathML, no iframes.
 * Images are dropped deliberately: an <img> in model output (or in an ingested
 * page the extractive model quotes) can be a tracking pixel fetched by every
 * visitor's browser. `class` is not allowed either, so a reply can never
 * forge or imitate the `svc-branding` element.
 */
export const SANITIZE: Config = {
  ALLOWED_TAGS: [
    "p", "br", "hr", "strong", "b", "em", "i", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li", "a",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "sup", "sub",
    /*
     * Not an element a reply can add (the parser never makes a second one): the parsed document's own body,
     * where DOMPurify's walk starts. Unlisted, it was "removed" by hoisting a deep copy of the whole reply
     * into <html>, work that changed no output (the result is the body's inner HTML) and garbage that
     * lived on with the document (see `parsed` below).
     */
    "body",
  ],
  ALLOWED_ATTR: ["href", "title", "start", "colspan", "rowspan", "align"],
  // Not URLs: DOMPurify tests every attribute outside this list against the URL pattern, which dropped them all.
  ADD_URI_SAFE_ATTR: ["start", "colspan", "rowspan", "align"],
  ALLOWED_URI_REGEXP: ALLOWED_URI,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
};

/** What every link in a reply carries: it opens in a new tab, without access to the page that opened it. */
export const LINK_ATTRIBUTES = [
  ["target", "_blank"],
  ["rel", "noopener noreferrer"],
] as const;

/** DOMPurify's hook adding {@link LINK_ATTRIBUTES} to each link it keeps. */
export const openInNewTab = (node: Element) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    for (const [name, value] of LINK_ATTRIBUTES) node.setAttribute(name, value);
  }
};

/**
 * Loads marked and isomorphic-dompurify (with jsdom: about a second and
 * 100 MB) and returns the synchronous Markdown -> sanitised HTML function.
 * The render worker runs it with `exclusive` (the thread's DOMPurify is its
 * own, so the configuration is parsed once: ~0.2 ms a reply); the in-process
 * fallback shares DOMPurify with whatever else the host process sanitises.
 *
 * @example
 * const toHtml = await loadHtmlRenderer();
 * toHtml("**Hi** <script>alert(1)</script>"); // "<p><strong>Hi</strong> </p>"
 */
export async function loadHtmlRenderer({ exclusive = false }: { exclusive?: boolean } = {}): Promise<(markdown: string) => string> {
  const [{ Marked }, purify] = await Promise.all([import("marked"), import("isomorphic-dompurify")]);
  const marked = new Marked({ gfm: true, async: false });
  const config = { ...SANITIZE, RETURN_TRUSTED_TYPE: false } as const;
  /*
   * The document DOMPurify parsed the reply into, emptied once its HTML is out. DOMPurify walks it
   * with a NodeIterator, which jsdom tracks through a WeakRef, and V8 clears a WeakRef's target only
   * in a full collection: each reply's whole document outlived the young generation's collections
   * and was promoted to the old generation. The worker's heap limit makes V8 grow that generation
   * little before collecting it, so mark-compacts came often, and the replies that met one made the
   * render latency's tail. Emptied, only a bare document and body wait for the full collection.
   */
  let parsed: Document | undefined;
  // Allowed elements only reach this hook, so `ownerDocument` cannot be a clobbered form's named child.
  const afterSanitizeAttributes = (node: Element) => {
    parsed ??= node.ownerDocument;
    openInNewTab(node);
  };
  const emptyParsed = () => {
    parsed?.body?.replaceChildren();
    parsed = undefined;
  };
  if (exclusive) {
    purify.setConfig(config);
    purify.addHook("afterSanitizeAttributes", afterSanitizeAttributes);
    return (markdown) => {
      try {
        return (purify.sanitize(marked.parse(markdown) as string) as string).trim();
      } finally {
        emptyParsed();
      }
    };
  }
  return (markdown: string): string => {
    const html = marked.parse(markdown) as string;
    // Shared with the host: the hook lives only for this synchronous call, so it never leaks into other users.
    purify.addHook("afterSanitizeAttributes", afterSanitizeAttributes);
    try {
      return (purify.sanitize(html, config) as string).trim();
    } finally {
      purify.removeHook("afterSanitizeAttributes", afterSanitizeAttributes);
      emptyParsed();
    }
  };
}
