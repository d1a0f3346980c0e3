import type { ChunkRecord, DocumentRecord, EmbedderRecord, KnowledgeStore, WebDocument } from "../../core/storage/index.js";
import { ftsMatch } from "./fts-match.js";
import { createFullTextMerger } from "./fts-merge.js";
import { createTermSelector } from "./fts-terms.js";
import { createFullTextSearch } from "./full-text.js";
import { createBatchWrite, EMBEDDER_SETTING, recordEmbedderStatement, toBlob } from "./knowledge-write.js";
import type { KnowledgeWriter } from "./knowledge-writer.js";
import type { Sqlite } from "./open.js";
import type { WalCheckpoints } from "./wal-checkpoints.js";
import type { WriteGate } from "./write-gate.js";

/**
 * Documents, chunks (FTS5 rows follow them by trigger) and float32 vectors in
 * `chunk_embeddings` (deleted with their chunk by foreign key; a trigger counts
 * removed or replaced ones per chatbot in `chunk_embedding_revisions`).
 */
export function createKnowledgeStore(sqlite: Sqlite, checkpoints: WalCheckpoints, writer: KnowledgeWriter, gate: WriteGate): KnowledgeStore {
  migrateLegacyVectors(sqlite);
  const bySource = sqlite.prepare<[number, string], { id: number; content_hash: string }>("SELECT id, content_hash FROM documents WHERE chatbot_id = ? AND source = ?");
  const byHash = sqlite.prepare<[number, string], { x: number }>("SELECT 1 AS x FROM documents WHERE chatbot_id = ? AND content_hash = ? LIMIT 1");
  const hashes = sqlite.prepare<[number, number, number], { id: number; source: string; content_hash: string }>(
    "SELECT id, source, content_hash FROM documents WHERE chatbot_id = ? AND id > ? ORDER BY id LIMIT ?",
  );
  const webDocs = sqlite.prepare<[number], WebDocument>(
    "SELECT id, source, content_hash, etag, last_modified FROM documents WHERE chatbot_id = ? AND fetched_at IS NOT NULL ORDER BY id",
  );
  const botsWithWebDocs = sqlite
    .prepare<[], number>("SELECT chatbot_id FROM documents WHERE fetched_at IS NOT NULL UNION SELECT chatbot_id FROM web_sitemaps ORDER BY 1")
    .pluck();
  const rememberSitemap = sqlite.prepare<[number, string, string]>("INSERT INTO web_sitemaps (chatbot_id, url, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING");
  const sitemapsOf = sqlite.prepare<[number], { id: number; url: string }>("SELECT id, url FROM web_sitemaps WHERE chatbot_id = ? ORDER BY id");
  const forgetSitemap = sqlite.prepare<[number, number]>("DELETE FROM web_sitemaps WHERE id = ? AND chatbot_id = ?");
  const markFetched = sqlite.prepare<[string | null, string | null, string, number, number]>(
    "UPDATE documents SET etag = ?, last_modified = ?, fetched_at = ? WHERE id = ? AND chatbot_id = ?",
  );
  const list = sqlite.prepare<[number], DocumentRecord>(
    "SELECT id, name, type, source, url, chunk_count, bytes, created_at, updated_at FROM documents WHERE chatbot_id = ? ORDER BY id",
  );
  const deleteDoc = sqlite.prepare<[number, number]>("DELETE FROM documents WHERE id = ? AND chatbot_id = ?");
  const hasChunks = sqlite.prepare<[number], { x: number }>("SELECT 1 AS x FROM chunks WHERE chatbot_id = ? LIMIT 1");
  // Rows as arrays: better-sqlite3 builds a row object through the V8 API, slower than the object literal below (a search reads dozens).
  const chunksByIds = sqlite
    .prepare<[string], [number, number, string, string, string, string, string | null]>(
      `SELECT c.id, c.document_id, c.heading, c.content, d.name, d.type, d.url
         FROM chunks c JOIN documents d ON d.id = c.document_id
        WHERE c.id IN (SELECT value FROM json_each(?))`,
    )
    .raw();
  const chunksOfBot = sqlite.prepare<[number], { id: number; heading: string; content: string }>("SELECT id, heading, content FROM chunks WHERE chatbot_id = ? ORDER BY id");
  const botsWithChunks = sqlite.prepare<[], number>("SELECT DISTINCT chatbot_id FROM chunks ORDER BY chatbot_id").pluck();

  const readSetting = sqlite.prepare<[string], string>("SELECT value FROM settings WHERE key = ?").pluck();
  const upsertVector = sqlite.prepare<[number, number, Buffer]>(
    "INSERT INTO chunk_embeddings (chunk_id, chatbot_id, embedding) VALUES (?, ?, ?) ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding",
  );
  const deleteVectors = sqlite.prepare("DELETE FROM chunk_embeddings");
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
  const merger = createFullTextMerger(sqlite);

  const embedder = (): EmbedderRecord | undefined => {
    const value = readSetting.get(EMBEDDER_SETTING);
    return value === undefined ? undefined : (JSON.parse(value) as EmbedderRecord);
  };
  const recordEmbedder = recordEmbedderStatement(sqlite);

  const writeBatch = createBatchWrite(sqlite);

  const replaceVectors = sqlite.transaction((used: EmbedderRecord, recreate: boolean, vectors: { chatbot_id: number; chunk_id: number; vector: Float32Array }[]) => {
    if (recreate) {
      deleteVectors.run();
      recordEmbedder(used, new Date().toISOString());
    }
    for (const v of vectors) upsertVector.run(v.chunk_id, v.chatbot_id, toBlob(v.vector));
  });

  // One read transaction, so the state describes the vectors read (another process may write between two statements).
  const vectorsWithState = sqlite.transaction((chatbotId: number, chunkIds: number[]) => ({
    state: state.get(chatbotId, chatbotId)!,
    vectors: chunkIds.length === 0 ? [] : vectorsByIds.all(JSON.stringify(chunkIds)).map(([id, blob]): [number, Float32Array] => [id, toVector(blob)]),
  }));
  const removeDocument = sqlite.transaction((chatbotId: number, documentId: number) => deleteDoc.run(documentId, chatbotId).changes > 0);

  return {
    async documentBySource(chatbotId, source) {
      return bySource.get(chatbotId, source);
    },
    async hasDocumentWithHash(chatbotId, contentHash) {
      return byHash.get(chatbotId, contentHash) !== undefined;
    },
    async documentHashes(chatbotId, afterId, limit) {
      return hashes.all(chatbotId, afterId, limit);
    },
    async writeBatch(batch) {
      return writer.write(batch, async () => {
        checkpoints.busy();
        const written = writeBatch.immediate(batch);
        await merger.settle();
        return written;
      });
    },
    async documents(chatbotId) {
      return list.all(chatbotId);
    },
    async webDocuments(chatbotId) {
      return webDocs.all(chatbotId);
    },
    async chatbotsWithWebDocuments() {
      return botsWithWebDocs.all();
    },
    async markFetched(chatbotId, documentId, v) {
      return gate.run(() => markFetched.run(v.etag, v.last_modified, v.fetched_at, documentId, chatbotId).changes > 0);
    },
    async rememberSitemap(chatbotId, url, now) {
      return gate.run(() => void rememberSitemap.run(chatbotId, url, now));
    },
    async sitemaps(chatbotId) {
      return sitemapsOf.all(chatbotId);
    },
    async forgetSitemap(chatbotId, sitemapId) {
      return gate.run(() => forgetSitemap.run(sitemapId, chatbotId).changes > 0);
    },
    async removeDocument(chatbotId, documentId) {
      const removed = await gate.run(() => removeDocument.immediate(chatbotId, documentId));
      await merger.settle();
      return removed;
    },
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
    async chunksOfChatbot(chatbotId) {
      return chunksOfBot.all(chatbotId);
    },
    async chatbotsWithChunks() {
      return botsWithChunks.all();
    },
    async fullText(chatbotId, words, limit) {
      const match = ftsMatch(terms.select(words));
      return match ? fullText(match, chatbotId, limit) : [];
    },
    async knownWords(words) {
      return terms.known(words);
    },
    async embedder() {
      return embedder();
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
    async replaceVectors(used, recreate, vectors) {
      checkpoints.busy();
      replaceVectors.immediate(used, recreate, vectors);
    },
  };
}

/**
 * Databases from before `chunk_embeddings` kept vectors in a vec0 table
 * created at run time; copy them over once and drop it. Checked inside the
 * write transaction because another process may be doing the same.
 */
export function migrateLegacyVectors(sqlite: Sqlite): void {
  const legacy = sqlite.prepare<[], { x: number }>("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'chunk_vectors'");
  if (!legacy.get()) return;
  sqlite
    .transaction(() => {
      if (!legacy.get()) return;
      sqlite.exec(
        `INSERT OR IGNORE INTO chunk_embeddings (chunk_id, chatbot_id, embedding)
           SELECT v.chunk_id, v.chatbot_id, v.embedding FROM chunk_vectors v WHERE v.chunk_id IN (SELECT id FROM chunks);
         DROP TRIGGER IF EXISTS chunk_vectors_ad;
         DROP TABLE chunk_vectors;`,
      );
    })
    .immediate();
}

function toVector(blob: Buffer): Float32Array {
  // Blobs from SQLite need not be 4-byte aligned; copy when they are not.
  return blob.byteOffset % 4 === 0 ? new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4) : new Float32Array(new Uint8Array(blob).buffer);
}
