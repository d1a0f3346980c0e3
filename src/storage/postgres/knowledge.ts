import type pg from "pg";
import type { ChunkRecord, EmbedderRecord, KnowledgeStore, VectorState, WebDocument } from "../../core/storage/index.js";
import { readBinaryCopy } from "./binary-copy.js";
import { all, one, run, statement, transaction, type Queryable } from "./client.js";
import { createFullTextSearch, createFullTextSettler } from "./full-text.js";
import { bumpRevision } from "./revisions.js";

/** The settings row naming the embedder that built the stored vectors. */
const EMBEDDER_SETTING = "knowledge.embedder";
/** First key of the per-chatbot advisory lock every knowledge write takes (the second is the chatbot id). */
const KNOWLEDGE_LOCK = 0x6b6e;

const bySource = statement("knowledge_by_source", "SELECT id, content_hash FROM documents WHERE chatbot_id = $1 AND source = $2");
const hashes = statement("knowledge_document_hashes", "SELECT id, source, content_hash FROM documents WHERE chatbot_id = $1 AND id > $2 ORDER BY id LIMIT $3");
const byHash = statement("knowledge_by_hash", "SELECT 1 AS x FROM documents WHERE chatbot_id = $1 AND content_hash = $2 LIMIT 1");
const insertDoc = statement(
  "knowledge_insert_document",
  `INSERT INTO documents (chatbot_id, name, type, source, url, content_hash, chunk_count, bytes, etag, last_modified, fetched_at, created_at, updated_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $10, $11, $12, $9, $9) RETURNING id`,
);
const updateDoc = statement(
  "knowledge_update_document",
  `UPDATE documents SET name = $2, type = $3, url = $4, content_hash = $5, chunk_count = $6, bytes = $7, updated_at = $8,
          etag = $9, last_modified = $10, fetched_at = $11 WHERE id = $1`,
);
const webDocs = statement(
  "knowledge_web_documents",
  "SELECT id, source, content_hash, etag, last_modified FROM documents WHERE chatbot_id = $1 AND fetched_at IS NOT NULL ORDER BY id",
);
const botsWithWebDocs = statement(
  "knowledge_chatbots_with_web_documents",
  "SELECT chatbot_id FROM documents WHERE fetched_at IS NOT NULL UNION SELECT chatbot_id FROM web_sitemaps ORDER BY 1",
);
const rememberSitemap = statement("knowledge_remember_sitemap", "INSERT INTO web_sitemaps (chatbot_id, url, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING");
const sitemapsOf = statement("knowledge_sitemaps", "SELECT id, url FROM web_sitemaps WHERE chatbot_id = $1 ORDER BY id");
const forgetSitemap = statement("knowledge_forget_sitemap", "DELETE FROM web_sitemaps WHERE id = $1 AND chatbot_id = $2");
const markFetched = statement("knowledge_mark_fetched", "UPDATE documents SET etag = $3, last_modified = $4, fetched_at = $5 WHERE id = $1 AND chatbot_id = $2");
const deleteChunks = statement("knowledge_delete_chunks", "DELETE FROM chunks WHERE document_id = $1");
// A document's chunks and vectors in two statements, whatever their number.
const insertChunks = statement(
  "knowledge_insert_chunks",
  `INSERT INTO chunks (document_id, chatbot_id, ordinal, heading, content)
   SELECT $1, $2, t.ordinal - 1, t.heading, t.content FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS t(heading, content, ordinal)
    ORDER BY t.ordinal RETURNING id, ordinal`,
);
const insertVectors = statement(
  "knowledge_insert_vectors",
  "INSERT INTO chunk_embeddings (chunk_id, chatbot_id, embedding) SELECT t.id, $2, t.embedding FROM unnest($1::int[], $3::bytea[]) AS t(id, embedding)",
);
const upsertVectors = statement(
  "knowledge_upsert_vectors",
  `INSERT INTO chunk_embeddings (chunk_id, chatbot_id, embedding) SELECT * FROM unnest($1::int[], $2::int[], $3::bytea[])
   ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding`,
);
const deleteAllVectors = statement("knowledge_delete_all_vectors", "DELETE FROM chunk_embeddings");
const list = statement(
  "knowledge_documents",
  "SELECT id, name, type, source, url, chunk_count, bytes, created_at, updated_at FROM documents WHERE chatbot_id = $1 ORDER BY id",
);
const deleteDoc = statement("knowledge_delete_document", "DELETE FROM documents WHERE id = $1 AND chatbot_id = $2");
const hasChunks = statement("knowledge_has_chunks", "SELECT 1 AS x FROM chunks WHERE chatbot_id = $1 LIMIT 1");
const chunksByIds = statement(
  "knowledge_chunks_by_ids",
  `SELECT c.id, c.document_id, c.heading, c.content, d.name, d.type, d.url, e.embedding
     FROM chunks c JOIN documents d ON d.id = c.document_id
     LEFT JOIN chunk_embeddings e ON e.chunk_id = c.id AND c.id = ANY($2::int[])
    WHERE c.id = ANY($1::int[])`,
);
const chunksOfBot = statement("knowledge_chunks_of_chatbot", "SELECT id, heading, content FROM chunks WHERE chatbot_id = $1 ORDER BY id");
const botsWithChunks = statement("knowledge_chatbots_with_chunks", "SELECT DISTINCT chatbot_id FROM chunks ORDER BY chatbot_id");
const readSetting = statement("knowledge_read_embedder", "SELECT value FROM settings WHERE key = $1");
const writeSetting = statement(
  "knowledge_write_embedder",
  `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
   ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
);
const recordIfAbsent = statement("knowledge_record_embedder", "INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING");
const STATE = `SELECT (SELECT max(chunk_id) FROM chunk_embeddings WHERE chatbot_id = $1) AS max_id,
          coalesce((SELECT revision FROM revisions WHERE scope = 'vectors:' || $1), 0)::int8 AS revision`;
const vectorState = statement("knowledge_vector_state", STATE);
/** COPY takes no parameters: the three integers are checked and written into the statement. */
const vectorsAfterCopy = (chatbotId: number, afterId: number, limit: number) => {
  for (const n of [chatbotId, afterId, limit]) if (!Number.isSafeInteger(n)) throw new TypeError(`Not an integer: ${n}`);
  return `COPY (SELECT chunk_id, embedding FROM chunk_embeddings WHERE chatbot_id = ${chatbotId} AND chunk_id > ${afterId} ORDER BY chunk_id LIMIT ${limit}) TO STDOUT (FORMAT binary)`;
};
// One row with a null chunk when none of the ids has a vector: the state always comes back.
const vectorsOf = statement(
  "knowledge_vectors_of",
  `SELECT s.max_id, s.revision, e.chunk_id, e.embedding FROM (${STATE}) s LEFT JOIN chunk_embeddings e ON e.chunk_id = ANY($2::int[])`,
);
const lockChatbot = statement("knowledge_lock_chatbot", "SELECT pg_advisory_xact_lock($1, $2)");

/*
 * Instances keep each chatbot's vectors in memory and follow the table through
 * VectorState: vectors added show as a higher max(chunk_id), removed or replaced
 * ones bump `vectors:<chatbot>` (by trigger, so cascades count). Chunk ids come
 * from a sequence, so a transaction that started inserting earlier could commit
 * later with lower ids, and a reader past them would never see those rows. Every
 * knowledge write therefore takes its chatbot's advisory lock before inserting:
 * one chatbot's chunk ids then become visible in increasing order.
 */
const lock = (tx: Queryable, chatbotId: number) => run(tx, lockChatbot, [KNOWLEDGE_LOCK, chatbotId]);

export function createPgKnowledgeStore(pool: pg.Pool): KnowledgeStore {
  const fullText = createFullTextSearch(pool);
  const pending = createFullTextSettler(pool);

  return {
    documentBySource: (chatbotId, source) => one<{ id: number; content_hash: string }>(pool, bySource, [chatbotId, source]),
    hasDocumentWithHash: async (chatbotId, contentHash) => (await one(pool, byHash, [chatbotId, contentHash])) !== undefined,
    documentHashes: (chatbotId, afterId, limit) => all<{ id: number; source: string; content_hash: string }>(pool, hashes, [chatbotId, afterId, limit]),

    async writeBatch({ chatbot_id: chatbotId, embedder, documents, now, replace_only: replaceOnly = false }) {
      const written = await transaction(pool, async (tx) => {
        await lock(tx, chatbotId);
        await run(tx, recordIfAbsent, [EMBEDDER_SETTING, JSON.stringify({ spec: embedder.spec, dimension: embedder.dimension }), now]);
        let added = 0;
        let updated = 0;
        for (const { fields: d, chunks } of documents) {
          // Looked up again under the lock: another instance may have written it since.
          const existing = await one<{ id: number }>(tx, bySource, [chatbotId, d.source]);
          let documentId: number;
          if (existing) {
            await run(tx, deleteChunks, [existing.id]);
            await run(tx, updateDoc, [existing.id, d.name, d.type, d.url, d.content_hash, d.chunk_count, d.bytes, now, d.etag, d.last_modified, d.fetched_at]);
            documentId = existing.id;
            updated++;
          } else if (replaceOnly) {
            continue;
          } else {
            documentId = (
              await one<{ id: number }>(tx, insertDoc, [chatbotId, d.name, d.type, d.source, d.url, d.content_hash, d.chunk_count, d.bytes, now, d.etag, d.last_modified, d.fetched_at])
            )!.id;
            added++;
          }
          if (chunks.length === 0) continue;
          const ids = await all<{ id: number; ordinal: number }>(tx, insertChunks, [
            documentId,
            chatbotId,
            chunks.map((c) => storable(c.heading)),
            chunks.map((c) => storable(c.content)),
          ]);
          ids.sort((a, b) => a.ordinal - b.ordinal);
          await run(tx, insertVectors, [ids.map((r) => r.id), chatbotId, chunks.map((c) => toBytes(c.vector))]);
        }
        await bumpRevision(tx, "knowledge");
        return { added, updated };
      });
      await pending.settle();
      return written;
    },

    documents: (chatbotId) => all(pool, list, [chatbotId]),
    webDocuments: (chatbotId) => all<WebDocument>(pool, webDocs, [chatbotId]),
    chatbotsWithWebDocuments: async () => (await all<{ chatbot_id: number }>(pool, botsWithWebDocs)).map((r) => r.chatbot_id),
    rememberSitemap: async (chatbotId, url, now) => void (await run(pool, rememberSitemap, [chatbotId, url, now])),
    sitemaps: (chatbotId) => all<{ id: number; url: string }>(pool, sitemapsOf, [chatbotId]),
    forgetSitemap: async (chatbotId, sitemapId) => (await run(pool, forgetSitemap, [sitemapId, chatbotId])) > 0,
    markFetched: async (chatbotId, documentId, v) => (await run(pool, markFetched, [documentId, chatbotId, v.etag, v.last_modified, v.fetched_at])) > 0,

    removeDocument: (chatbotId, documentId) =>
      transaction(pool, async (tx) => {
        await lock(tx, chatbotId);
        const removed = (await run(tx, deleteDoc, [documentId, chatbotId])) > 0;
        if (removed) await bumpRevision(tx, "knowledge");
        return removed;
      }),

    hasChunks: async (chatbotId) => (await one(pool, hasChunks, [chatbotId])) !== undefined,
    async chunks(ids, withVectors = []) {
      if (ids.length === 0) return [];
      const rows = await all<ChunkRecord & { embedding: Buffer | null }>(pool, chunksByIds, [ids, withVectors]);
      return rows.map(({ embedding, ...row }) => (embedding ? { ...row, vector: toVector(embedding) } : row));
    },
    chunksOfChatbot: (chatbotId) => all(pool, chunksOfBot, [chatbotId]),
    chatbotsWithChunks: async () => (await all<{ chatbot_id: number }>(pool, botsWithChunks)).map((r) => r.chatbot_id),
    fullText: (chatbotId, words, limit) => fullText.search(chatbotId, words, limit),
    knownWords: (words) => fullText.known(words),

    async embedder() {
      const row = await one<{ value: string }>(pool, readSetting, [EMBEDDER_SETTING]);
      return row ? (JSON.parse(row.value) as EmbedderRecord) : undefined;
    },

    vectorState: async (chatbotId) => toState((await one<StateRow>(pool, vectorState, [chatbotId]))!),

    // Binary COPY: the bulk of loading a chatbot's vectors, which as hex text took twice their bytes and a decoding.
    async vectorsAfter(chatbotId, afterId, limit) {
      const rows = await readBinaryCopy(pool, vectorsAfterCopy(chatbotId, afterId, limit));
      // The vectors lie unaligned in the stream's chunks: copied into one buffer for the page rather than one small
      // allocation each, which left the process holding more memory after a load (bench scenario 2's RSS row).
      const page = new Uint8Array(rows.reduce((sum, [, embedding]) => sum + embedding!.length, 0));
      let at = 0;
      return rows.map(([id, embedding]): [number, Float32Array] => {
        page.set(embedding!, at);
        const vector = new Float32Array(page.buffer, at, embedding!.length / 4);
        at += embedding!.length;
        return [int4(id!), vector];
      });
    },
    async vectorsOf(chatbotId, chunkIds) {
      const rows = await all<StateRow & { chunk_id: number | null; embedding: Buffer | null }>(pool, vectorsOf, [chatbotId, chunkIds]);
      return { state: toState(rows[0]!), vectors: rows.flatMap((r): [number, Float32Array][] => (r.chunk_id === null ? [] : [[r.chunk_id, toVector(r.embedding!)]])) };
    },

    replaceVectors: (embedder, recreate, vectors) =>
      transaction(pool, async (tx) => {
        const chatbots = [...new Set(vectors.map((v) => v.chatbot_id))].sort((a, b) => a - b);
        for (const chatbotId of chatbots) await lock(tx, chatbotId);
        if (recreate) {
          await run(tx, deleteAllVectors);
          await run(tx, writeSetting, [EMBEDDER_SETTING, JSON.stringify({ spec: embedder.spec, dimension: embedder.dimension }), new Date().toISOString()]);
        }
        if (vectors.length > 0) {
          await run(tx, upsertVectors, [vectors.map((v) => v.chunk_id), vectors.map((v) => v.chatbot_id), vectors.map((v) => toBytes(v.vector))]);
        }
        // Vectors stored under ids below a cached max would be missed: every chatbot touched reloads.
        for (const chatbotId of chatbots) await bumpRevision(tx, `vectors:${chatbotId}`);
        await bumpRevision(tx, "knowledge");
      }),
  };
}

interface StateRow {
  max_id: number | null;
  /** int8 arrives as a string. */
  revision: string;
}

const toState = (row: StateRow): VectorState => ({ max_id: row.max_id, revision: Number(row.revision) });

/** Ingested files may contain U+0000, which PostgreSQL text cannot hold: it becomes U+FFFD, as an unreadable byte would. */
function storable(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text;
}

function toBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** An `integer` column in binary format. */
function int4(bytes: Buffer): number {
  if (bytes.length !== 4) throw new Error(`Expected a 4-byte integer, got ${bytes.length} bytes`);
  return bytes.readInt32BE(0);
}

function toVector(bytes: Buffer): Float32Array {
  // bytea from node-postgres or binary COPY need not be 4-byte aligned; copy when it is not.
  return bytes.byteOffset % 4 === 0 ? new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4) : new Float32Array(new Uint8Array(bytes).buffer);
}
