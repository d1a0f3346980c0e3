import type { DocumentRecord, EmbedderRecord, KnowledgeStore, WebDocument } from "../../core/storage/index.js";
import { createFullTextMerger } from "./fts-merge.js";
import { createKnowledgeReads } from "./knowledge-reads.js";
import { createBatchWrite, recordEmbedderStatement, toBlob } from "./knowledge-write.js";
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
  const chunksOfBot = sqlite.prepare<[number], { id: number; heading: string; content: string }>("SELECT id, heading, content FROM chunks WHERE chatbot_id = ? ORDER BY id");
  const botsWithChunks = sqlite.prepare<[], number>("SELECT DISTINCT chatbot_id FROM chunks ORDER BY chatbot_id").pluck();

  const upsertVector = sqlite.prepare<[number, number, Buffer]>(
    "INSERT INTO chunk_embeddings (chunk_id, chatbot_id, embedding) VALUES (?, ?, ?) ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding",
  );
  const deleteVectors = sqlite.prepare("DELETE FROM chunk_embeddings");
  const reads = createKnowledgeReads(sqlite);
  const merger = createFullTextMerger(sqlite);
  const recordEmbedder = recordEmbedderStatement(sqlite);
  const writeBatch = createBatchWrite(sqlite);

  const replaceVectors = sqlite.transaction((used: EmbedderRecord, recreate: boolean, vectors: { chatbot_id: number; chunk_id: number; vector: Float32Array }[]) => {
    if (recreate) {
      deleteVectors.run();
      recordEmbedder(used, new Date().toISOString());
    }
    for (const v of vectors) upsertVector.run(v.chunk_id, v.chatbot_id, toBlob(v.vector));
  });

  const removeDocument = sqlite.transaction((chatbotId: number, documentId: number) => deleteDoc.run(documentId, chatbotId).changes > 0);

  return {
    ...reads,
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
    async chunksOfChatbot(chatbotId) {
      return chunksOfBot.all(chatbotId);
    },
    async chatbotsWithChunks() {
      return botsWithChunks.all();
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
