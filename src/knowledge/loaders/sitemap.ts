import { Parser } from "htmlparser2";

/** What a sitemap lists: pages (`<urlset>`) or further sitemaps (`<sitemapindex>`). */
export interface Sitemap {
  kind: "urlset" | "sitemapindex";
  /** The `<loc>` entries that are http(s) URLs, in order, without repeats. */
  locations: string[];
  /** `<loc>` entries left out: not a URL, or a scheme other than http(s). */
  ignored: number;
}

/**
 * Reads a sitemap or sitemap index (sitemaps.org protocol). Returns undefined
 * when the XML's root element is neither, so any other XML stays "not a
 * supported page". htmlparser2 in xmlMode rather than regexes: it decodes
 * entities (`&amp;` in query strings), CDATA sections and namespace
 * prefixes as real sitemap generators write them.
 *
 * @example
 * parseSitemap("<urlset><url><loc>https://example.com/a</loc></url></urlset>");
 * // { kind: "urlset", locations: ["https://example.com/a"], ignored: 0 }
 */
export function parseSitemap(xml: string): Sitemap | undefined {
  let root: string | undefined;
  let inLoc = false;
  let text = "";
  const seen = new Set<string>();
  const locations: string[] = [];
  let ignored = 0;

  const parser = new Parser(
    {
      onopentag(name) {
        const local = localName(name);
        root ??= local;
        if (local === "loc") {
          inLoc = true;
          text = "";
        }
      },
      ontext(data) {
        if (inLoc) text += data;
      },
      onclosetag(name) {
        if (localName(name) !== "loc" || !inLoc) return;
        inLoc = false;
        const location = text.trim();
        if (!/^https?:\/\//i.test(location) || !URL.canParse(location)) {
          ignored++;
          return;
        }
        const normalised = new URL(location).href;
        if (seen.has(normalised)) return;
        seen.add(normalised);
        locations.push(normalised);
      },
    },
    { xmlMode: true, decodeEntities: true, recognizeCDATA: true },
  );
  parser.write(xml);
  parser.end();
  if (root !== "urlset" && root !== "sitemapindex") return undefined;
  return { kind: root, locations, ignored };
}

function localName(name: string): string {
  const colon = name.indexOf(":");
  return (colon === -1 ? name : name.slice(colon + 1)).toLowerCase();
}
