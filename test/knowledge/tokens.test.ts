import { describe, expect, it } from "vitest";
import { contentTerms, termFinder } from "../../src/knowledge/text/tokens.js";

describe("termFinder", () => {
  const sorted = (found: Set<string>) => [...found].sort();

  it("finds the asked terms a text contains, as contentTerms would stem them, whatever the case and punctuation", () => {
    const find = termFinder(["refund", "key", "invoic", "2fa"]);
    expect(sorted(find("REFUNDS for API-keys: see 2FA (not invoices' totals)"))).toEqual(["2fa", "invoic", "key", "refund"]);
    expect(sorted(find("Refunding is for the keyboard"))).toEqual(["refund"]);
  });

  it("finds a term past words that only start or contain it, and through the plural that changes its ending", () => {
    const find = termFinder(["key", "policy", "monkey", "fly", "other"]);
    expect(sorted(find("Keyboards, hotkeys and donkeys: see the KEYS"))).toEqual(["key"]);
    expect(sorted(find("Refund policies"))).toEqual(["policy"]);
    expect(sorted(find("monkey business: flies, others"))).toEqual(["fly", "monkey", "other"]);
    expect(sorted(find("keyboard policyholders monkeying"))).toEqual(["monkey"]);
    // One-letter words are no terms (contentTerms drops them), even where one begins a wanted term.
    expect(sorted(termFinder(["f", "fy"])("f fy"))).toEqual(["fy"]);
  });

  it("treats text with accents or other scripts the same as contentTerms does", () => {
    const text = "Café refunds, naïve KEYS — 日本語 invoices";
    const terms = contentTerms(text);
    expect(terms).toEqual(["cafe", "refund", "naiv", "key", "日本語", "invoic"]);
    expect(sorted(termFinder([...terms, "shipping"])(text))).toEqual([...terms].sort());
  });
});
