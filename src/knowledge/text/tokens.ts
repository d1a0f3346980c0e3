/*
 * Word handling shared by the hash embedder, the FTS query builder and the
 * lexical part of relevance scoring, so all three agree on what a "word" is.
 */

/** English function words and question words: they match everything, so they only add noise. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all also am an and any are aren as at be because been before being below between both but by " +
    "can cannot could did didn do does doesn doing don down during each else etc ever every few for from further get gets got had has have having " +
    "he her here hers herself him himself his how however i if in into is isn it its itself just let lets like may me might more most must my myself " +
    "need no nor not now of off on once only or other ought our ours ourselves out over own per please same shall she should so some such " +
    "than that the their theirs them themselves then there these they this those through thus to too under until up upon us use used using " +
    "very via want was wasn we were weren what whats when where whether which while who whom whose why will with within without would " +
    "yes yet you your yours yourself yourselves tell know"
  ).split(" "),
);

const WORD = /[\p{L}\p{N}]+/gu;
const DIACRITICS = /\p{M}+/gu;
const NON_ASCII = /[^\x00-\x7f]/;
const ASCII_TERM = /^[a-z0-9]+$/;

/** Lower-cased words with diacritics removed, in order. */
export function words(text: string): string[] {
  // Most text is ASCII, where normalising changes nothing but still costs a copy.
  const plain = NON_ASCII.test(text) ? text.normalize("NFKD").replace(DIACRITICS, "") : text;
  return plain.toLowerCase().match(WORD) ?? [];
}

/**
 * The finder of which of `terms` (stemmed, as from {@link contentTerms}) occur
 * in a text: the same as intersecting with `contentTerms(text)`, without
 * stemming every word. Made once per query, used on each chunk.
 *
 * @example
 * termFinder(["key", "refund"])("Creating API keys"); // Set {"key"}
 */
export function termFinder(terms: readonly string[]): (text: string) => Set<string> {
  const wanted = new Set(terms);
  // A stem keeps at least its word's first two letters, so only words starting like a wanted term need stemming.
  const starts = new Set(terms.filter((t) => t.length >= 2).map(firstTwo));
  const add = (found: Set<string>, w: string) => {
    if (STOP_WORDS.has(w)) return;
    const t = stem(w);
    if (wanted.has(t)) found.add(t);
  };
  const startingAscii = asciiWordsStartingWith(terms);
  return (text) => {
    const found = new Set<string>();
    if (!NON_ASCII.test(text)) {
      for (const w of text.toLowerCase().match(startingAscii) ?? []) if (w.length >= 2) add(found, w);
      return found;
    }
    for (const w of words(text)) if (w.length >= 2 && starts.has(firstTwo(w))) add(found, w);
    return found;
  };
}

/**
 * The pattern of the words of lower-case ASCII text (runs of letters and
 * digits, as in {@link words}) that can stem to one of `terms`: a stem is its
 * word's beginning, or for "ies" made "y" all of it but the "y" (policies ->
 * policy). One pass of the regular-expression engine over a text finds them
 * for every term, without cutting out the other words.
 */
function asciiWordsStartingWith(terms: readonly string[]): RegExp {
  // Terms of anything else (a related word with a space, accents) cannot be an ASCII word's stem.
  const beginnings = new Set(terms.filter((t) => t.length >= 2 && ASCII_TERM.test(t)).map((t) => (t.endsWith("y") ? t.slice(0, -1) : t)));
  return beginnings.size === 0 ? /(?!)/g : new RegExp(`(?<![a-z0-9])(?:${[...beginnings].join("|")})[a-z0-9]*`, "g");
}

/** A word's first two UTF-16 units as one number: no string made per word. */
function firstTwo(word: string): number {
  return word.charCodeAt(0) * 65536 + word.charCodeAt(1);
}

/**
 * A light suffix stripper, so `keys`/`key` and `installing`/`install` meet.
 * Deliberately tiny: FTS5 has Porter for the lexical side; this only serves hashing and coverage.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /^\d/.test(word)) return word;
  const base = stripSuffix(word);
  // A final "e" comes and goes with suffixes: calculate/calculated, invoice/invoicing.
  return base.length > 4 && base.endsWith("e") ? base.slice(0, -1) : base;
}

function stripSuffix(word: string): string {
  const n = word.length;
  if (word.endsWith("ies") && n > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith("sses")) return word.slice(0, -2);
  if (word.endsWith("ing") && n > 5) return undouble(word.slice(0, -3));
  if (word.endsWith("ed") && n > 4 && !word.endsWith("eed")) return undouble(word.slice(0, -2));
  if (word.endsWith("ly") && n > 5) return word.slice(0, -2);
  if (word.endsWith("s") && !word.endsWith("ss") && !word.endsWith("us") && !word.endsWith("is")) return word.slice(0, -1);
  return word;
}

// "running" -> "runn" -> "run"; "configured" -> "configur" stays (no double letter).
function undouble(word: string): string {
  const n = word.length;
  return n > 3 && word[n - 1] === word[n - 2] && !/[lsz]/.test(word[n - 1]!) ? word.slice(0, -1) : word;
}

/** Stemmed content words (stop words and one-letter words removed), in order. */
export function contentTerms(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) {
    if (w.length < 2 || STOP_WORDS.has(w)) continue;
    out.push(stem(w));
  }
  return out;
}

/**
 * Everyday English words: they appear in any text, so a match on them is weak
 * evidence that a chunk is about the question (an IDF prior that needs no corpus).
 */
const COMMON_WORDS: ReadonlySet<string> = new Set(
  (
    "able across actually add after ago almost along already always amount another answer anyone anything anyway area around ask away back bad " +
    "base become begin best better big bit black body book bring build call came case cause certain change check child children city clear close " +
    "come common complete consider continue course cut day days different done during early easy end enough even example fact far feel find fine " +
    "first follow form found free full general give given go going gone good great group half hand happen hard head hear help high hold home hour " +
    "idea important include keep kind large last late later lead learn least leave left less level life light line little live long look lot low " +
    "made main make man many matter mean meet men mind minute moment money month morning move much name near never new next nice night number " +
    "often old one open order part people person place plan play point possible power present probably problem provide public put question " +
    "quite rather read real really reason right run said say second see seem seen set show side since small something sometimes soon sort speak " +
    "special stand start state still stop story strong sure system take taken talk thing things think three time times today together told took " +
    "top toward true try turn two type understand usually value various view wait walk water way week well went whole why wide woman women word " +
    "work world write wrong year years young good great best way thing stuff recommend explain give"
  )
    .split(" ")
    .map(stem),
);

/** How much a content term says about topic: everyday words count half. */
export function termWeight(term: string): number {
  return COMMON_WORDS.has(term) ? 0.5 : 1;
}
