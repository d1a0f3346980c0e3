import type { DocumentBatch, DocumentFields, EmbedderRecord } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";

/** The settings row naming the embedder that built the stored vectors. */
export const EMBEDDER_SETTING = "knowledge.embedder";

/** A knowledge batch's transaction on one connection: what the main thread and the bulk writer (knowledge-writer.ts) both run. */
export interface BatchWrite {
  (batch: DocumentBatch): { added: number; updated: number };
  immediate(batch: DocumentBatch): { added: number; updated: number };
}

/**
 * Prepares the statements of a knowledge write on `sqlite` and returns its
 * transaction: embedder record, then each document replaced (same source)
 * or added with its chunks (FTS5 rows follow by trigger) and vectors.
 *
 * @example
 * const write = createBatchWrite(sqlite);
 * const { added } = write.immediate(batch);
 */
export function createBatchWrite(sqlite: Sqlite): BatchWrite {
  const bySource = sqlite.prepare<[number, string], { id: number }>("SELECT id FROM documents WHERE chatbot_id = ? AND source = ?");
  const insertDoc = sqlite
    .prepare<[number, string, string, string, string | null, string, number, number, string | null, string | null, string | null, string, string], number>(
      `INSERT INTO documents (chatbot_id, name, type, source, url, content_hash, chunk_count, bytes, etag, last_modified, fetched_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    )
    .pluck();
  const updateDoc = sqlite.prepare<[string, string, string | null, string, number, number, string | null, string | null, string | null, string, number]>(
    "UPDATE documents SET name = ?, type = ?, url = ?, content_hash = ?, chunk_count = ?, bytes = ?, etag = ?, last_modified = ?, fetched_at = ?, updated_at = ? WHERE id = ?",
  );
  const deleteChunks = sqlite.prepare<[number]>("DELETE FROM chunks WHERE document_id = ?");
  const insertChunk = sqlite.prepare<[number, number, number, string, string]>("INSERT INTO chunks (document_id, chatbot_id, ordinal, heading, content) VALUES (?, ?, ?, ?, ?)");
  const insertVector = sqlite.prepare<[number, number, Buffer]>("INSERT INTO chunk_embeddings (chunk_id, chatbot_id, embedding) VALUES (?, ?, ?)");
  const hasEmbedder = sqlite.prepare<[string], { x: number }>("SELECT 1 AS x FROM settings WHERE key = ?");
  const writeSetting = recordEmbedderStatement(sqlite);

  const insertDocument = (chatbotId: number, d: DocumentFields, now: string) =>
    insertDoc.get(chatbotId, d.name, d.type, d.source, d.url, d.content_hash, d.chunk_count, d.bytes, d.etag, d.last_modified, d.fetched_at, now, now)!;

  return sqlite.transaction(({ chatbot_id: chatbotId, embedder: used, documents, now, replace_only: replaceOnly = false }: DocumentBatch) => {
    if (!hasEmbedder.get(EMBEDDER_SETTING)) writeSetting(used, now);
    let added = 0;
    let updated = 0;
    for (const { fields: d, chunks } of documents) {
      // Looked up again inside the transaction: another process may have written it since.
      const existing = bySource.get(chatbotId, d.source);
      let documentId: number;
      if (existing) {
        deleteChunks.run(existing.id);
        updateDoc.run(d.name, d.type, d.url, d.content_hash, d.chunk_count, d.bytes, d.etag, d.last_modified, d.fetched_at, now, existing.id);
        documentId = existing.id;
        updated++;
      } else if (replaceOnly) {
        continue;
      } else {
        documentId = insertDocument(chatbotId, d, now);
        added++;
      }
      chunks.forEach((chunk, ordinal) => {
        const chunkId = Number(insertChunk.run(documentId, chatbotId, ordinal, chunk.heading, chunk.content).lastInsertRowid);
        insertVector.run(chunkId, chatbotId, toBlob(chunk.vector));
      });
    }
    return { added, updated };
  });
}

/** Writes the embedder record (spec and dimension) on `sqlite`. */
export function recordEmbedderStatement(sqlite: Sqlite): (embedder: EmbedderRecord, now: string) => void {
  const writeSetting = sqlite.prepare<[string, string, string]>(
    "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
  );
  return (e, now) => void writeSetting.run(EMBEDDER_SETTING, JSON.stringify({ spec: e.spec, dimension: e.dimension }), now);
}

/** A vector as the blob SQLite stores, without copying it. */
export function toBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}
