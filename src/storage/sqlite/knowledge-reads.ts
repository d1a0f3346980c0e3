import type { ChunkRecord, EmbedderRecord, KnowledgeReads } from "../../core/storage/index.js";
import { ftsMatch } from "./fts-match.js";
import { createTermSelector } from "./fts-terms.js";
import { createFullTextSearch } from "./full-text.js";
import { EMBEDDER_SETTING } from "./knowledge-write.js";
import type { Sqlite } from "./open.js";

/**
 * A search's reads on one connection: the main one's (knowledge.ts), or a search
 * thread's own (search-reader.ts), which sees the main one's commits as another
 * process's.
 */
export function createKnowledgeReads(sqlite: Sqlite): KnowledgeReads {
  const hasChunks = sqlite.prepare<[number], { x: number }>("SELECT 1 AS x FROM chunks WHERE chatbot_id = ? LIMIT 1");
  // Rows as arrays: better-sqlite3 builds a row object through the V8 API, slower than the object literal below (a search reads dozens).
  const chunksByIds = sqlite
    .prepare<[string], [number, number, string, string, string, string, string | null]>(
      `SELECT c.id, c.document_id, c.heading, c.content, d.name, d.type, d.url
         FROM chunks c JOIN documents d ON d.id = c.document_id
        WHERE c.id IN (SELECT value FROM json_each(?))`,
    )
    .raw();
  const readSetting = sqlite.prepare<[string], string>("SELECT value FROM settings WHERE key = ?").pluck();
  const state = sqlite.prepare<[number, number], { max_id: number | null; revision: number }>(
    `SELECT (SELECT max(chunk_id) FROM chunk_embeddings WHERE chatbot_id = ?) AS max_id,
            coalesce((SELECT revision FROM chunk_embedding_revisions WHERE chatbot_id = ?), 0) AS revision`,
  );
  const vectorsAfter = sqlite
    .prepare<[number, number, number], [number, Buffer]>("SELECT chunk_id, embedding FROM chunk_embeddings WHERE chatbot_id = ? AND chunk_id > ? ORDER BY chunk_id LIMIT ?")
    .raw();
  const vectorsByIds = sqlite
    .prepare<[string], [number, Buffer]>("SELECT chunk_id, embedding FROM chunk_embeddings WHERE chunk_id IN (SELECT value FROM json_each(?))")
    .raw();
  const fullText = createFullTextSearch(sqlite);
  const terms = createTermSelector(sqlite);

  // One read transaction, so the state describes the vectors read (another connection may write between two statements).
  const vectorsWithState = sqlite.transaction((chatbotId: number, chunkIds: number[]) => ({
    state: state.get(chatbotId, chatbotId)!,
    vectors: chunkIds.length === 0 ? [] : vectorsByIds.all(JSON.stringify(chunkIds)).map(([id, blob]): [number, Float32Array] => [id, toVector(blob)]),
  }));

  return {
    async hasChunks(chatbotId) {
      return hasChunks.get(chatbotId) !== undefined;
    },
    async chunks(ids, vectorsOf = []) {
      if (ids.length === 0) return [];
      const rows: (ChunkRecord & { vector?: Float32Array })[] = chunksByIds
        .all(JSON.stringify(ids))
        .map(([id, document_id, heading, content, name, type, url]) => ({ id, document_id, heading, content, name, type, url }));
      if (vectorsOf.length === 0) return rows;
      const vectors = new Map(vectorsByIds.all(JSON.stringify(vectorsOf)));
      for (const row of rows) {
        const blob = vectors.get(row.id);
        if (blob) row.vector = toVector(blob);
      }
      return rows;
    },
    async fullText(chatbotId, words, limit) {
      const match = ftsMatch(terms.select(words));
      return match ? fullText(match, chatbotId, limit) : [];
    },
    async knownWords(words) {
      return terms.known(words);
    },
    async embedder() {
      const value = readSetting.get(EMBEDDER_SETTING);
      return value === undefined ? undefined : (JSON.parse(value) as EmbedderRecord);
    },
    async vectorState(chatbotId) {
      return state.get(chatbotId, chatbotId)!;
    },
    async vectorsAfter(chatbotId, afterId, limit) {
      return vectorsAfter.all(chatbotId, afterId, limit).map(([id, blob]) => [id, toVector(blob)]);
    },
    async vectorsOf(chatbotId, chunkIds) {
      return vectorsWithState(chatbotId, chunkIds);
    },
  };
}

function toVector(blob: Buffer): Float32Array {
  // Blobs from SQLite need not be 4-byte aligned; copy when they are not.
  return blob.byteOffset % 4 === 0 ? new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4) : new Float32Array(new Uint8Array(blob).buffer);
}
