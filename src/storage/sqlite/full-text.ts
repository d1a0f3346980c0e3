import type { Sqlite } from "./open.js";

/** How many global full-text hits are read per chunk asked for, before falling back to the per-chatbot join. */
const GLOBAL_FACTOR = 4;

/**
 * BM25 full-text candidates of one chatbot, best first. The FTS5 index is
 * shared by every chatbot; joining each match to `chunks` to filter by chatbot
 * costs a row lookup per match (most of the query time on large bases), so the
 * best global matches are ranked first and only those joined. When they hold
 * fewer than `limit` of this chatbot's chunks and there were more matches (other
 * chatbots crowd the top), the exact per-chatbot query runs instead: either way
 * the result is the chatbot's top `limit`.
 *
 * @example
 * const fullText = createFullTextSearch(sqlite);
 * fullText('"refund" OR "invoice"', bot.id, 32); // [chunk ids]
 */
export function createFullTextSearch(sqlite: Sqlite) {
  // The chatbot is looked up per row as the rows are stepped (the ranked subquery is already in order), so
  // the rows after this chatbot's `limit` best are never looked up.
  const global = sqlite.prepare<[string, number], { id: number; chatbot_id: number }>(
    `SELECT f.id, (SELECT chatbot_id FROM chunks WHERE id = f.id) AS chatbot_id FROM
       (SELECT rowid AS id, bm25(chunks_fts, 1.0, 2.0) AS score FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?) f
     ORDER BY f.score`,
  );
  const ofChatbot = sqlite.prepare<[string, number, number], { id: number }>(
    `SELECT c.id FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid
      WHERE chunks_fts MATCH ? AND c.chatbot_id = ? ORDER BY bm25(chunks_fts, 1.0, 2.0) LIMIT ?`,
  );

  return function fullText(match: string, chatbotId: number, limit: number): number[] {
    const read = limit * GLOBAL_FACTOR;
    const ids: number[] = [];
    let rows = 0;
    for (const row of global.iterate(match, read)) {
      rows++;
      if (row.chatbot_id !== chatbotId) continue;
      ids.push(row.id);
      if (ids.length === limit) return ids;
    }
    return rows < read ? ids : ofChatbot.all(match, chatbotId, limit).map((row) => row.id);
  };
}
