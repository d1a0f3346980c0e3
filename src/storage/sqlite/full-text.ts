import type { Statement } from "better-sqlite3";
import type { Sqlite } from "./open.js";

/** How many global full-text hits are read per chunk asked for, before falling back to the per-chatbot join. */
const GLOBAL_FACTOR = 4;

/**
 * BM25 full-text candidates of one chatbot, best first. The FTS5 index is
 * shared by every chatbot; joining each match to `chunks` to filter by chatbot
 * costs a row lookup per match (most of the query time on large bases), so the
 * best global matches are ranked first and only those joined. When they hold
 * fewer than `limit` of this chatbot's chunks and there were more matches (other
 * chatbots crowd the top), a wider global read, then the exact per-chatbot
 * query, run instead: whichever answers, the result is the chatbot's top `limit`
 * (hits of equal score in index order, as FTS5 returns them).
 *
 * @example
 * const fullText = createFullTextSearch(sqlite);
 * fullText('"refund" OR "invoice"', bot.id, 32); // [chunk ids]
 */
export function createFullTextSearch(sqlite: Sqlite) {
  // Whether a chunk is the chatbot's is read from `chunks_chatbot_idx` (chatbot, id): a few pages that stay
  // in the page cache, where the chunk's own row sits among the large pages of chunk texts that a search's
  // other reads push out of it. The planner picks the row by id unless told.
  const ofChatbotSql = "SELECT 1 FROM chunks INDEXED BY chunks_chatbot_idx WHERE chatbot_id = ? AND id =";
  // The chatbot is looked up per row as the rows are stepped (the ranked subquery is already in order), so
  // the rows after this chatbot's `limit` best are never looked up.
  const global = byLimit((read) =>
    sqlite.prepare<[number, string], { id: number; mine: number }>(
      `SELECT f.id, EXISTS (${ofChatbotSql} f.id) AS mine FROM
         (SELECT rowid AS id, bm25(chunks_fts, 1.0, 2.0) AS score FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score LIMIT ${read}) f
       ORDER BY f.score`,
    ),
  );
  const ofChatbot = byLimit((limit) =>
    sqlite
      .prepare<[string, number], number>(
        `SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? AND EXISTS (${ofChatbotSql} chunks_fts.rowid)
          ORDER BY bm25(chunks_fts, 1.0, 2.0) LIMIT ${limit}`,
      )
      .pluck(),
  );

  // The best `read` global hits in order, up to this chatbot's `limit` best among them, and how many hits that took.
  const globalHits = (match: string, chatbotId: number, limit: number, read: number) => {
    const ids: number[] = [];
    let rows = 0;
    for (const row of global(read).iterate(chatbotId, match)) {
      rows++;
      if (!row.mine) continue;
      ids.push(row.id);
      if (ids.length === limit) break;
    }
    return { ids, rows };
  };
  // Chatbots whose own chunks did not fill the global top `limit` of a search (other chatbots' chunks share
  // the index): they read `GLOBAL_FACTOR` times as many at once. The others (the only chatbot with knowledge,
  // or one whose chunks lead for its questions) read `limit`, which FTS5 ranks in a smaller sorted heap.
  const crowded = new Set<number>();

  return function fullText(match: string, chatbotId: number, limit: number): number[] {
    if (!crowded.has(chatbotId)) {
      const { ids, rows } = globalHits(match, chatbotId, limit, limit);
      if (ids.length === limit || rows < limit) return ids;
      crowded.add(chatbotId);
    }
    const read = limit * GLOBAL_FACTOR;
    const { ids, rows } = globalHits(match, chatbotId, limit, read);
    if (ids.length === limit) {
      if (rows === limit) crowded.delete(chatbotId);
      return ids;
    }
    return rows < read ? ids : ofChatbot(limit).all(match, chatbotId);
  };
}

/** Statements kept, one per limit asked for: limits follow the `k` of searches, the service's setting unless a caller picks another. */
const MAX_LIMITS = 16;

/**
 * One statement per `LIMIT`, written into its text: SQLite gives a virtual
 * table (FTS5) the bound `LIMIT ?` while planning, so binding it again sends
 * the statement back through the parser and planner on every run, FTS5's table
 * lookups included. Ordinary tables' `LIMIT ?` is not planned with its value
 * and needs no such statements.
 */
function byLimit<S extends Statement<any[], any>>(prepare: (limit: number) => S): (limit: number) => S {
  const statements = new Map<number, S>();
  return (limit) => {
    const n = Math.max(0, Math.floor(limit));
    let statement = statements.get(n);
    if (!statement) {
      if (statements.size === MAX_LIMITS) statements.delete(statements.keys().next().value!);
      statement = prepare(n);
      statements.set(n, statement);
    }
    return statement;
  };
}
