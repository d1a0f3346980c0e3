import { describe, expect, it } from "vitest";
import { contentTerms, termFinder } from "../../src/knowledge/text/tokens.js";

describe("termFinder", () => {
  const sorted = (found: Set<string>) => [...found].sort();

  it("finds the asked terms a text contains, as contentTerms would stem them, whatever the case and punctuation", () => {
    const find = termFinder(["refund", "key", "invoic", "2fa"]);
    expect(sorted(find("REFUNDS for API-keys: see 2FA (not invoices' totals)"))).toEqual(["2fa", "invoic", "key", "refund"]);
    expect(sorted(find("Refunding is for the keyboard"))).toEqual(["refund"]);
  });

  it("treats text with accents or other scripts the same as contentTerms does", () => {
    const text = "Café refunds, naïve KEYS — 日本語 invoices";
    const terms = contentTerms(text);
    expect(terms).toEqual(["cafe", "refund", "naiv", "key", "日本語", "invoic"]);
    expect(sorted(termFinder([...terms, "shipping"])(text))).toEqual([...terms].sort());
  });
});
