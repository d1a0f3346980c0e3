import type { KnowledgeReads } from "../core/storage/index.js";
import { dot, type Embedder } from "./embedders/index.js";
import { normalize } from "./embedders/types.js";
import { prepareExpansion, type QueryExpansion } from "./expansion.js";
import { embeddingText } from "./document-text.js";
import { ftsWords } from "./fts-query.js";
import { contentTerms, STOP_WORDS, termFinder, termWeight, words } from "./text/tokens.js";
import { cosine, sentenceVector } from "./text/word-vectors.js";
import type { RetrievedChunk } from "./types.js";
import type { VectorIndex } from "./vectors.js";

/** Longer questions add nothing to retrieval but cost embedding and matching time. */
export const MAX_QUERY_CHARS = 2000;
/** The usual reciprocal-rank-fusion constant. */
const RRF_K = 60;
/** Relevance added for a heading path that covers the whole question: the heading names what its section answers. */
const HEADING_BONUS = 0.1;
/** Related words (query expansion) count this much of the words actually asked: in the query vector and in word coverage. */
export const EXPANSION_WEIGHT = 0.5;
/**
 * Relevance added, at most, for a chunk whose word-vector sentence vector is
 * close to the question's (hash embedder): it reorders chunks that match some
 * words, by meaning. More lets off-topic questions through.
 */
const SENTENCE_WEIGHT = 0.1;
/**
 * The same bonus, at most, once some chunk has passed the threshold with the
 * one above: the question is on topic, and meaning may then reorder by more
 * (and bring in a paraphrase's chunk) without answering off-topic questions.
 */
const ON_TOPIC_SENTENCE_WEIGHT = 0.3;
/** Sentence-vector similarity rescaled from this floor (most unrelated texts sit below) to this ceiling. */
const SENTENCE_RANGE = [0.5, 0.9] as const;
/** Chunks whose sentence vectors are kept between queries (each with its text, to notice a changed chunk): popular chunks come back often. */
const SENTENCE_CACHE_MAX = 2000;

export interface SearchDeps {
  store: KnowledgeReads;
  vectors: VectorIndex;
  embedder: () => Embedder;
}

export interface HybridSearchOptions {
  k: number;
  threshold: number;
  includeBelowThreshold: boolean;
  /** Also work out the extractive answer over the chunks, where that spares the caller's thread (search-thread.ts); ignored here. */
  extract?: boolean;
  /** The full-text candidates ({@link fullTextHits}) when the caller finds them: the search awaits them only once its vector candidates are known. */
  textHits?: number[] | Promise<number[]>;
}

/** Candidates read from each side (full text, vectors) per result asked for, before fusion and scoring. */
const candidatePool = (k: number) => Math.max(k * 4, 24);

/**
 * A search's full-text candidates, chunk ids best first: the first step of
 * {@link createHybridSearch}, which a caller may run on its own connection and
 * hand over as `textHits` (search-thread.ts).
 */
export function fullTextHits(store: Pick<KnowledgeReads, "fullText">, chatbotId: number, query: string, k: number): Promise<number[]> {
  const words = ftsWords(query.slice(0, MAX_QUERY_CHARS));
  return words.length > 0 ? store.fullText(chatbotId, words, candidatePool(k)) : Promise.resolve([]);
}

/**
 * Hybrid retrieval for one chatbot: full-text and nearest-vector candidates,
 * fused by reciprocal rank, each scored for relevance in 0..1 (see
 * {@link relevance}), filtered by the threshold, best first.
 */
export function createHybridSearch({ store, vectors, embedder }: SearchDeps) {
  const chunkMeaning = createSentenceCache();
  // Chatbots seen with chunks are not asked again (a round trip per search on PostgreSQL): if their chunks
  // are removed since, the searches below find nothing all the same; the check only spares the work for
  // a chatbot without knowledge.
  const withChunks = new Set<number>();
  return async function search(chatbotId: number, query: string, { k, threshold, includeBelowThreshold, textHits }: HybridSearchOptions): Promise<RetrievedChunk[]> {
    const text = query.slice(0, MAX_QUERY_CHARS);
    const queryTerms = [...new Set(contentTerms(text))];
    if (queryTerms.length === 0) return [];
    if (!withChunks.has(chatbotId)) {
      if (!(await store.hasChunks(chatbotId))) return [];
      withChunks.add(chatbotId);
    }
    const model = embedder();
    await vectors.assertCompatible(model.spec);
    // Neural embedders place synonyms and related words near each other already; the hash embedder only matches the words it is given.
    const hash = model.spec === "hash";
    const pool = candidatePool(k);
    // Full text needs only the question: it runs while the question is expanded and embedded, and the store
    // may look up what both need to know of the words in one round trip.
    const textSearch = textHits ? Promise.resolve(textHits) : fullTextHits(store, chatbotId, text, k);
    // Awaited below; until then a failure must not count as unhandled when the expansion fails first.
    textSearch.catch(() => {});
    const expansion = await expandKnown(store, text, hash);
    const expandVector = hash && expansion.words.length > 0;
    const [asked, expanded] = await model.embed(expandVector ? [text, expansion.words.join(" ")] : [text]);
    const queryVector = expanded ? combine(asked!, expanded, EXPANSION_WEIGHT) : asked!;

    const candidates = new Map<number, { fused: number; similarity?: number }>();
    const [textRanked, vectorHits] = await Promise.all([textSearch, vectors.nearest(chatbotId, queryVector, pool)]);
    textRanked.forEach((id, rank) => candidates.set(id, { fused: 1 / (RRF_K + rank + 1) }));
    vectorHits.forEach((hit, rank) => {
      const entry = candidates.get(hit.chunk_id) ?? { fused: 0 };
      entry.fused += 1 / (RRF_K + rank + 1);
      entry.similarity = 1 - hit.distance;
      candidates.set(hit.chunk_id, entry);
    });

    const textOnly = [...candidates].filter(([, entry]) => entry.similarity === undefined).map(([id]) => id);
    const rows = await store.chunks([...candidates.keys()], textOnly);
    const cover = coverageOf(queryTerms, expansion.related);
    const meaning = hash ? sentenceSimilarity(text, chunkMeaning) : () => 0;
    const scored = rows.map((row) => {
      const entry = candidates.get(row.id)!;
      const similarity = entry.similarity ?? (row.vector ? dot(queryVector, row.vector) : 0);
      const chunkText = embeddingText(row);
      const lexical = relevance(similarity, cover(chunkText), model.spec);
      const heading = HEADING_BONUS * cover(row.heading);
      const scoreWith = (meaningOf: () => number, onTopic: boolean) => round(Math.min(1, withMeaning(lexical, threshold, meaningOf, onTopic) + heading));
      return { row, fused: entry.fused, scoreWith, lowest: scoreWith(() => 0, false), chunkText };
    });
    // Judged with the small bonus, as every chunk was before, so off-topic questions are refused as before.
    const onTopic = hash && scored.some((s) => s.lowest >= threshold || (s.scoreWith(() => 1, false) >= threshold && s.scoreWith(() => meaning(s.row.id, s.chunkText), false) >= threshold));
    // Meaning (0..1) only moves a chunk within its lowest and highest score: a chunk whose highest stays below the
    // k-th best lowest ranks below k others whatever its meaning, so its meaning is not worked out.
    const bar = kthLargest(scored.map((s) => s.lowest), k);
    const results: (RetrievedChunk & { fused: number })[] = scored.map(({ row, fused, scoreWith, lowest, chunkText }) => ({
      chunk_id: row.id,
      document_id: row.document_id,
      content: row.content,
      heading: row.heading,
      name: row.name,
      ...titleOf(row),
      type: row.type,
      url: row.url,
      score: scoreWith(() => 1, onTopic) < bar ? lowest : scoreWith(() => meaning(row.id, chunkText), onTopic),
      fused,
    }));
    return results
      .filter((r) => includeBelowThreshold || r.score >= threshold)
      .sort((a, b) => b.score - a.score || b.fused - a.fused)
      .slice(0, k)
      .map(({ fused: _fused, ...chunk }) => chunk);
  };
}

/** The question's related (and with `similar`, similar) words that the knowledge base uses (in any chatbot's chunks): the others only blur a query. */
async function expandKnown(store: KnowledgeReads, text: string, similar: boolean): Promise<QueryExpansion> {
  const { offered, finish } = prepareExpansion(text, similar);
  return finish(offered.length === 0 ? [] : await store.knownWords(offered));
}

function contentWords(text: string): string[] {
  return words(text).filter((w) => !STOP_WORDS.has(w));
}

/** Chunk sentence vectors by chunk id, checked against the text (a re-ingested chunk may differ), oldest dropped first. */
function createSentenceCache() {
  const cache = new Map<number, { text: string; vector: Float32Array | null }>();
  return (chunkId: number, text: string): Float32Array | null => {
    const hit = cache.get(chunkId);
    if (hit?.text === text) return hit.vector;
    const vector = sentenceVector(contentWords(text));
    cache.delete(chunkId);
    if (cache.size >= SENTENCE_CACHE_MAX) cache.delete(cache.keys().next().value!);
    cache.set(chunkId, { text, vector });
    return vector;
  };
}

/** Scorer of chunks by word-vector sentence similarity to the question, 0..1 (see {@link SENTENCE_RANGE}). */
function sentenceSimilarity(question: string, chunkVector: (chunkId: number, text: string) => Float32Array | null): (chunkId: number, text: string) => number {
  const asked = sentenceVector(contentWords(question));
  if (!asked) return () => 0;
  const [floor, ceiling] = SENTENCE_RANGE;
  return (chunkId, text) => {
    const chunk = chunkVector(chunkId, text);
    return chunk ? Math.min(1, Math.max(0, (cosine(asked, chunk) - floor) / (ceiling - floor))) : 0;
  };
}

/**
 * A chunk's meaning bonus. Until the question is known to be on topic (some
 * chunk passed the threshold with the small bonus), it counts only for chunks
 * that already match the question somewhat: alone it would answer off-topic
 * questions. It is worked out only where it can lift the chunk over the
 * threshold or reorder those above it.
 */
function withMeaning(relevance: number, threshold: number, meaning: () => number, onTopic: boolean): number {
  const weight = onTopic ? ON_TOPIC_SENTENCE_WEIGHT : SENTENCE_WEIGHT;
  return (onTopic || relevance > 0) && relevance + weight >= threshold ? relevance + weight * meaning() : relevance;
}

/**
 * Weighted share of the query's content words (stemmed) that the chunk
 * contains. Everyday words weigh half, and when the query has specific words
 * but the chunk matches none of them, its everyday-word matches count half
 * again: "the best way to learn the guitar" is not about a page saying "the best way".
 * A word found only through a related word (query expansion) counts half,
 * and does not count as a specific word found. Returns the scorer of chunk
 * texts for one query, whose side is worked out once.
 */
export function coverageOf(queryTerms: string[], related: ReadonlyMap<string, ReadonlySet<string>>): (chunkText: string) => number {
  const find = termFinder([...new Set([...queryTerms, ...[...related.values()].flatMap((set) => [...set])])]);
  const relatedOf = queryTerms.map((t) => [...(related.get(t) ?? [])]);
  const weights = queryTerms.map(termWeight);
  return (chunkText) => {
    const have = find(chunkText);
    let found = 0;
    let total = 0;
    let specific = 0;
    let specificFound = 0;
    queryTerms.forEach((t, i) => {
      const w = weights[i]!;
      total += w;
      if (w === 1) specific++;
      const credit = have.has(t) ? 1 : relatedOf[i]!.some((r) => have.has(r)) ? EXPANSION_WEIGHT : 0;
      if (credit === 0) return;
      found += w * credit;
      // Only an asked word shows the chunk is on topic: "speed of light" is not about shipping "rates".
      if (w === 1 && credit === 1) specificFound++;
    });
    if (specific > 0 && specificFound === 0) found /= 2;
    return total === 0 ? 0 : found / total;
  };
}

/**
 * Relevance in 0..1. With the `hash` embedder, the similarity is lexical too,
 * so word coverage leads and similarity scales it: `coverage * (0.5 + 0.5 * semantic)`.
 * Neural embedders can match synonyms, so their similarity alone can also
 * qualify a chunk. Similarities sit on different scales per embedder
 * (unrelated texts score about 0.05 with `hash` and 0.3-0.5 with neural
 * models), hence the rescaling from an "unrelated" floor to a "clearly related" ceiling.
 */
export function relevance(similarity: number, wordCoverage: number, embedderSpec: string): number {
  const hash = embedderSpec === "hash";
  const [floor, ceiling] = hash ? [0.05, 0.45] : [0.35, 0.85];
  const semantic = Math.min(1, Math.max(0, (similarity - floor) / (ceiling - floor)));
  const lexical = wordCoverage * (0.5 + 0.5 * semantic);
  return round(hash ? lexical : Math.max(lexical, 0.6 * semantic));
}

/** The `k`-th largest of `values`, or -Infinity when there are fewer. */
function kthLargest(values: number[], k: number): number {
  return values.length < k ? -Infinity : values.sort((a, b) => b - a)[k - 1]!;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** `a + weight * b`, L2-normalised: the asked words' vector nudged towards their related words. */
export function combine(a: Float32Array, b: Float32Array, weight: number): Float32Array {
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! + weight * b[i]!;
  return normalize(out);
}

function titleOf(row: { heading: string; name: string; type: string }): { title?: string } {
  const title = row.heading.split(" > ")[0]!.trim();
  return row.type === "file" && title && title !== row.name ? { title } : {};
}
