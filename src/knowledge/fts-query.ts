import { STOP_WORDS, words } from "./text/tokens.js";

/** The distinct words of free text worth a full-text search: no stop words, none shorter than 2 letters. */
export function ftsWords(text: string): string[] {
  const seen = new Set<string>();
  for (const w of words(text)) {
    if (w.length >= 2 && !STOP_WORDS.has(w)) seen.add(w);
  }
  return [...seen];
}
