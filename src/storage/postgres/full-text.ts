import type pg from "pg";
import { all, one, plannedEachRun, run, sqlState, statement } from "./client.js";

/** More words make a query slower and no more precise. */
const MAX_TERMS = 12;
/** A word in more than this share of all chunks says little about a chunk but costs a long posting list. */
const FREQUENT_SHARE = 0.05;
/** Below this many matching chunks a word is cheap whatever its share, so small bases keep every word. */
const FREQUENT_MIN = 1000;
/** Document frequencies change with ingestion; they are a cost estimate, so being a minute stale is fine. */
const CACHE_MS = 60_000;
const CACHE_MAX = 50_000;

/*
 * websearch_to_tsquery accepts any text without raising (unbalanced quotes, stray
 * operators), and its `or` keeps the search an OR of words as on SQLite. Headings
 * weigh twice the body (weights D, C, B, A); normalisation 1 divides by the log of the
 * chunk's length, so long chunks do not win by repetition alone, much like BM25.
 */
const QUERY = "websearch_to_tsquery('english'::regconfig, $1)";
/*
 * Planned for each search: prepared, PostgreSQL soon settles on one generic plan for
 * every query and chatbot, which parses the query again for every matching chunk it
 * ranks and intersects the matches with all of the chatbot's chunks. Planned with the
 * values, the query is parsed once, and the chatbot's index is used only when the
 * chatbot holds few of the chunks.
 */
const search = plannedEachRun(
  "fulltext_search",
  `SELECT id FROM chunks WHERE chatbot_id = $2 AND search @@ ${QUERY}
    ORDER BY ts_rank('{0, 0, 0.5, 1}', search, ${QUERY}, 1) DESC, id LIMIT $3`,
);
/*
 * Every uncached word's document frequency in one round trip. A count visits every matching chunk
 * (a tenth of a large base for a common word), so: a word of one lexeme that the column's
 * statistics list among its most common (ANALYZE, which autovacuum runs after an ingestion, keeps
 * those above a percent or two of the rows) takes its share of $4 chunks from there, unless that
 * lands within a quarter of the frequent-word limit, where the count decides; other words are
 * counted up to $3 (one past the limit: beyond it a word is left out, or picked last, whatever its
 * exact count). A word whose count is not needed (`exact` false: only whether any chunk has it)
 * gets 1 when one does: that stops at the first matching chunk (a question's expansion offers tens
 * of words, common ones among them, and only needs to know which exist).
 */
const frequencies = statement(
  "fulltext_frequencies",
  `WITH common AS (
     SELECT e.lexeme, e.share FROM pg_stats AS s, unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(lexeme, share)
      WHERE s.schemaname = current_schema() AND s.tablename = 'chunks' AND s.attname = 'search' AND e.lexeme IS NOT NULL)
   SELECT w.word, (CASE WHEN w.exact THEN coalesce(
       (SELECT round(c.share * $4) FROM common AS c WHERE c.lexeme = (SELECT CASE WHEN count(*) = 1 THEN min(l) END FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, w.word))) AS l)
         AND (c.share * $4 < 0.8 * $3 OR c.share * $4 > 1.25 * $3)),
       (SELECT count(*) FROM (SELECT 1 FROM chunks WHERE search @@ websearch_to_tsquery('english'::regconfig, w.word) LIMIT $3) AS capped))
     ELSE (EXISTS (SELECT 1 FROM chunks WHERE search @@ websearch_to_tsquery('english'::regconfig, w.word)))::int END)::int AS n
     FROM unnest($1::text[], $2::boolean[]) AS w(word, exact)`,
);
const total = statement("fulltext_total", "SELECT count(*)::int AS n FROM chunks");

/**
 * Full-text candidates of one chatbot, best first. Words are picked as on SQLite:
 * by document frequency, the rarest first (up to 12), leaving out words found in
 * more than 5 % of all chunks unless nothing rarer is left; frequencies are counted
 * by PostgreSQL (so its stemming applies), only up to that 5 %, or read from its
 * statistics for common words, and cached per word. So when every word is that
 * frequent, the one searched may not be the least frequent (SQLite's exact counts
 * pick that one).
 *
 * @example
 * const fullText = createFullTextSearch(pool);
 * await fullText.search(bot.id, ["refund", "invoice"], 24); // [chunk ids]
 */
export function createFullTextSearch(pool: pg.Pool) {
  /** Document frequencies: exact up to the frequent-word limit, or read from the column's statistics. */
  let cache = new Map<string, number>();
  /** Whether any chunk has the word, for words counted only that far. */
  let present = new Map<string, boolean>();
  /** All chunks, counted when the cache started over; the frequent-word limit follows from it. */
  let chunkCount = 0;
  const limit = () => Math.max(FREQUENT_MIN, FREQUENT_SHARE * chunkCount);
  let since = -Infinity;
  let counting: Promise<void> | undefined;
  /** Words asked for in this turn of the event loop: true where the exact count is needed. */
  let batch: { words: Map<string, boolean>; counted: Promise<Map<string, number>> } | undefined;

  const refresh = (): Promise<void> | undefined => {
    const now = Date.now();
    if (now - since <= CACHE_MS && cache.size + present.size <= CACHE_MAX) return undefined;
    counting ??= (async () => {
      chunkCount = (await one<{ n: number }>(pool, total))!.n;
      cache = new Map();
      present = new Map();
      since = now;
    })().finally(() => (counting = undefined));
    return counting;
  };

  /*
   * Words asked for in the same turn of the event loop are counted in one
   * statement: a search asks for the words of its full-text query (counted) and
   * for the words its expansion offers (only whether they exist) at once.
   */
  const count = (words: string[], exact: boolean): Promise<Map<string, number>> => {
    if (!batch) {
      const asked = new Map<string, boolean>();
      const counted = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        batch = undefined;
        const found = new Map<string, number>();
        const rows = await all<{ word: string; n: number }>(pool, frequencies, [[...asked.keys()], [...asked.values()], Math.floor(limit()) + 1, chunkCount]);
        for (const { word, n } of rows) found.set(word, n);
        for (const [word, n] of found) {
          if (asked.get(word)) cache.set(word, n);
          else present.set(word, n > 0);
        }
        return found;
      });
      batch = { words: asked, counted };
    }
    for (const word of words) batch.words.set(word, exact || batch.words.get(word) === true);
    return batch.counted;
  };

  /** Exact frequencies of `words`. */
  const documentFrequencies = async (words: string[]): Promise<Map<string, number>> => {
    await refresh();
    // Read before waiting, and the count's answer after: the cache may be started over meanwhile.
    const known = new Map(words.map((w) => [w, cache.get(w)]));
    const missing = words.filter((w) => known.get(w) === undefined);
    const counted = missing.length > 0 ? await count(missing, true) : undefined;
    return new Map(words.map((w) => [w, known.get(w) ?? counted?.get(w) ?? 0]));
  };

  const select = async (words: string[]): Promise<string[]> => {
    const counts = await documentFrequencies(words);
    const ranked = words.map((word) => ({ word, n: counts.get(word) ?? 0 })).sort((a, b) => a.n - b.n);
    return ranked
      .filter((t, i) => i === 0 || t.n <= limit())
      .slice(0, MAX_TERMS)
      .map((t) => t.word);
  };

  return {
    async search(chatbotId: number, words: string[], max: number): Promise<number[]> {
      const picked = await select(words);
      if (picked.length === 0) return [];
      const rows = await all<{ id: number }>(pool, search, [picked.join(" or "), chatbotId, max]);
      return rows.map((r) => r.id);
    },
    /** The words found in at least one chunk (of any chatbot). */
    async known(words: string[]): Promise<string[]> {
      await refresh();
      const known = new Map(words.map((word) => [word, cache.has(word) ? cache.get(word)! > 0 : present.get(word)]));
      const missing = words.filter((word) => known.get(word) === undefined);
      const counted = missing.length > 0 ? await count(missing, false) : undefined;
      return words.filter((word) => known.get(word) ?? (counted?.get(word) ?? 0) > 0);
    },
  };
}

const cleanPending = statement("fulltext_clean_pending", "SELECT gin_clean_pending_list('chunks_search_idx'::regclass)");

/**
 * Moves the full-text index's pending entries into the index proper after a
 * write that added chunks. GIN keeps fresh entries in a pending list that every
 * search reads from start to end, and leaves them there until autovacuum runs
 * or the list reaches `gin_pending_list_limit` (4 MB by default): after an
 * ingestion smaller than that, searches paid a scan of everything it added
 * (many times the search itself) for as long as autovacuum waited, which on a
 * large table is until a fifth of it has been rewritten.
 *
 * Never fails, as the write it follows has committed: a role that does not own
 * the index may not clean it (the list then waits for autovacuum, as before),
 * and other errors leave the work for the next write.
 *
 * @example
 * const fullText = createFullTextSettler(pool);
 * await writeChunks();
 * await fullText.settle();
 */
export function createFullTextSettler(pool: pg.Pool): { settle(): Promise<void> } {
  let allowed = true;
  return {
    async settle() {
      if (!allowed) return;
      try {
        await run(pool, cleanPending);
      } catch (error) {
        if (sqlState(error) === "42501") allowed = false;
      }
    },
  };
}
