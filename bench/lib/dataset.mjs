import { createRandom, createZipf, deriveSeed } from "./prng.mjs";

/** The seed every dataset derives from unless `--seed` says otherwise. */
export const DEFAULT_SEED = 20240607;

// Real function words lead the frequency ranks, as in real documentation, so
// stop-word handling and "OR of common words" full-text queries get exercised.
const FUNCTION_WORDS = (
  "the of and to a in is for with on that you your can how by it this be are or from as when use " +
  "not an if all at which will each more new one has have its their also into only other than then " +
  "these they was we what where who why about after before between both do does how many most must no some such"
).split(" ");
// Domain words sit in the middle ranks: frequent enough to be "common", not stop words.
const DOMAIN_WORDS = (
  "api key server chatbot request response token model message conversation webhook lead document chunk " +
  "search index database query error status header config install deploy user account password session " +
  "event payload retry timeout limit credit plan page link file folder upload download stream cache memory"
).split(" ");
const ONSETS = ["b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "cr", "dr", "gr", "pl", "st", "tr", "sh", "ch", "th"];
const NUCLEI = ["a", "e", "i", "o", "u", "ai", "ea", "ou", "io"];
const CODAS = ["", "", "n", "r", "s", "t", "l", "m", "nd", "st", "x"];

/**
 * A seeded vocabulary: function words, domain words, then pseudo-words made of
 * syllables, in frequency-rank order (index 0 is the most frequent word).
 */
export function createVocabulary(seed, size = 30_000) {
  const rand = createRandom(deriveSeed(seed, "vocabulary"));
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const words = [...FUNCTION_WORDS];
  const seen = new Set(words);
  // Domain words spread over ranks 60..300.
  const domainAt = new Map(DOMAIN_WORDS.map((w, i) => [60 + Math.floor((i * 240) / DOMAIN_WORDS.length), w]));
  while (words.length < size) {
    const fixed = domainAt.get(words.length);
    if (fixed && !seen.has(fixed)) {
      words.push(fixed);
      seen.add(fixed);
      continue;
    }
    const syllables = 1 + Math.floor(rand() * 3) + (words.length > 2000 ? 1 : 0);
    let w = "";
    for (let s = 0; s < syllables; s++) w += pick(ONSETS) + pick(NUCLEI) + (s === syllables - 1 ? pick(CODAS) : "");
    if (!seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  return words;
}

/**
 * Deterministic Markdown documents (headings, paragraphs, lists, inline code)
 * with Zipf-distributed words; document `i` can be generated on its own.
 *
 * @example
 * const corpus = createCorpus(DEFAULT_SEED);
 * const { name, content } = corpus.document(0);
 */
export function createCorpus(seed = DEFAULT_SEED) {
  const vocabulary = createVocabulary(seed);
  const zipf = createZipf(vocabulary.length, 1.02);

  const sentenceOf = (rand, min = 8, max = 18) => {
    const n = min + Math.floor(rand() * (max - min + 1));
    const words = [];
    for (let i = 0; i < n; i++) words.push(vocabulary[zipf(rand)]);
    const s = words.join(" ");
    return s[0].toUpperCase() + s.slice(1) + ".";
  };
  const titleOf = (rand, n) => {
    const words = [];
    // Titles use rarer words, like real headings name specific things.
    while (words.length < n) {
      const w = vocabulary[zipf(rand)];
      if (w.length > 3) words.push(w);
    }
    return words.map((w) => w[0].toUpperCase() + w.slice(1)).join(" ");
  };

  return {
    vocabulary,
    /** Document `i`: `{name, content, sections}`; `sections` keeps each section's sentences for query generation. */
    document(i) {
      const rand = createRandom(deriveSeed(seed, `doc:${i}`));
      const sections = [];
      const title = titleOf(rand, 2 + Math.floor(rand() * 3));
      let md = `# ${title}\n\n${sentenceOf(rand)} ${sentenceOf(rand)}\n\n`;
      const sectionCount = 3 + Math.floor(rand() * 6);
      for (let s = 0; s < sectionCount; s++) {
        const heading = titleOf(rand, 1 + Math.floor(rand() * 3));
        const sentences = [];
        md += `## ${heading}\n\n`;
        const paragraphs = 1 + Math.floor(rand() * 4);
        for (let p = 0; p < paragraphs; p++) {
          const para = [];
          const count = 3 + Math.floor(rand() * 4);
          for (let k = 0; k < count; k++) para.push(sentenceOf(rand));
          sentences.push(...para);
          md += para.join(" ") + "\n\n";
          const r = rand();
          if (r < 0.15) {
            const items = 2 + Math.floor(rand() * 4);
            for (let k = 0; k < items; k++) md += `- ${sentenceOf(rand, 4, 9)}\n`;
            md += "\n";
          } else if (r < 0.22) {
            md += `Run \`${vocabulary[zipf(rand)]} --${vocabulary[zipf(rand)]}\` to ${sentenceOf(rand, 4, 8).toLowerCase()}\n\n`;
          }
        }
        sections.push({ heading, sentences });
      }
      return { name: `doc-${String(i).padStart(6, "0")}.md`, content: md, sections };
    },
    sentenceOf,
  };
}

/**
 * Visitor questions about the corpus: a few words of one sentence of a
 * document wrapped in question words, so some match well and many carry
 * common words (the slow case for full-text `OR` queries).
 */
export function createQueries(corpus, { seed = DEFAULT_SEED, count, documents }) {
  const rand = createRandom(deriveSeed(seed, "queries"));
  const starts = ["How do I", "What is the", "Can I", "Why does the", "Where can I find", "How to"];
  const queries = [];
  for (let q = 0; q < count; q++) {
    const doc = corpus.document(Math.floor(rand() * documents));
    const section = doc.sections[Math.floor(rand() * doc.sections.length)];
    const sentence = section.sentences[Math.floor(rand() * section.sentences.length)];
    const words = sentence.replace(/\.$/, "").toLowerCase().split(" ");
    const take = 3 + Math.floor(rand() * 4);
    const from = Math.floor(rand() * Math.max(1, words.length - take));
    queries.push(`${starts[Math.floor(rand() * starts.length)]} ${words.slice(from, from + take).join(" ")}?`);
  }
  return queries;
}

/**
 * Misspelt questions: every word altered so neither full-text search nor word
 * coverage matches, and the ranking left is the vector channel's alone (used
 * to measure the recall of approximate vector search against exact search).
 */
export function createTypoQueries(corpus, { seed = DEFAULT_SEED, count, documents }) {
  const rand = createRandom(deriveSeed(seed, "typo-queries"));
  const vocabulary = new Set(corpus.vocabulary);
  const mangle = (w) => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const at = 1 + Math.floor(rand() * Math.max(1, w.length - 1));
      const out = w.slice(0, at) + "qx"[Math.floor(rand() * 2)] + w.slice(at);
      if (!vocabulary.has(out)) return out;
    }
    return w + "qq";
  };
  return createQueries(corpus, { seed: deriveSeed(seed, "typo"), count, documents }).map((q) =>
    q
      .replace(/\?$/, "")
      .split(" ")
      .map((w) => (w.length >= 3 ? mangle(w.toLowerCase()) : "q" + w.toLowerCase() + "x"))
      .join(" "),
  );
}

/** A reply of about `words` words in Markdown with the constructs replies have: paragraphs, a list, bold, a link, code. */
export function createReply(corpus, { seed = DEFAULT_SEED, words = 300 } = {}) {
  const rand = createRandom(deriveSeed(seed, `reply:${words}`));
  const countWords = (text) => text.split(/\s+/).filter(Boolean).length;
  const parts = [];
  let count = 0;
  while (count < words) {
    let part;
    if (rand() < 0.2) {
      part = "";
      for (let k = 0; k < 3; k++) {
        const [first, ...rest] = corpus.sentenceOf(rand, 5, 10).split(" ");
        part += `- **${first}** ${rest.join(" ")}\n`;
      }
    } else {
      part = `${corpus.sentenceOf(rand)} See [the guide](https://docs.example.com/${parts.length}) and run \`chatsvc ingest\`. ${corpus.sentenceOf(rand)}\n`;
    }
    parts.push(part);
    count += countWords(part);
  }
  return parts.join("\n");
}
