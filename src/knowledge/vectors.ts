import type { Sqlite } from "../core/db/open.js";
import { nowIso } from "../core/clock.js";
import { ChatsvcError } from "../core/errors.js";
import { dot } from "./embedders/index.js";
import { createQuantizedVectors, type QuantizedVectors } from "./quantized-vectors.js";

/** Which embedder built the stored vectors; one per database. */
export interface EmbedderRecord {
  spec: string;
  dimension: number;
}

const SETTING = "knowledge.embedder";

/**
 * Approximate candidates re-scored in float per nearest neighbour asked for:
 * int8 rounding only reorders near-ties, so a small margin keeps recall exact in practice.
 */
const RESCORE_FACTOR = 2;
const MIN_RESCORED = 32;

/** A chunk's distance to the query vector (cosine distance, 0 = same direction). */
export interface VectorHit {
  chunk_id: number;
  distance: number;
}

interface Cached {
  index: QuantizedVectors;
  revision: number;
  maxId: number;
}

/**
 * Chunk vectors: float32 blobs in `chunk_embeddings` (deleted with their chunk
 * by foreign key), the settings row recording the embedder, and per chatbot an
 * in-memory int8 copy for nearest-neighbour candidates that are then re-scored
 * in float. The copy follows the table, also when another process writes:
 * added vectors have higher chunk ids, and a trigger counts removed or
 * replaced ones in `chunk_embedding_revisions`.
 */
export function createVectorIndex(sqlite: Sqlite) {
  migrateLegacyTable(sqlite);
  const readSetting = sqlite.prepare<[string], { value: string }>("SELECT value FROM settings WHERE key = ?");
  const writeSetting = sqlite.prepare<[string, string, string]>(
    "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
  );
  const insert = sqlite.prepare<[number, number, Buffer]>("INSERT INTO chunk_embeddings (chunk_id, chatbot_id, embedding) VALUES (?, ?, ?)");
  const upsert = sqlite.prepare<[number, number, Buffer]>(
    "INSERT INTO chunk_embeddings (chunk_id, chatbot_id, embedding) VALUES (?, ?, ?) ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding",
  );
  const deleteAll = sqlite.prepare("DELETE FROM chunk_embeddings");
  const state = sqlite.prepare<[number, number], { max_id: number | null; revision: number }>(
    `SELECT (SELECT max(chunk_id) FROM chunk_embeddings WHERE chatbot_id = ?) AS max_id,
            coalesce((SELECT revision FROM chunk_embedding_revisions WHERE chatbot_id = ?), 0) AS revision`,
  );
  const rowsAfter = sqlite
    .prepare<[number, number], [number, Buffer]>("SELECT chunk_id, embedding FROM chunk_embeddings WHERE chatbot_id = ? AND chunk_id > ? ORDER BY chunk_id")
    .raw();
  const byIds = sqlite
    .prepare<[string], [number, Buffer]>("SELECT chunk_id, embedding FROM chunk_embeddings WHERE chunk_id IN (SELECT value FROM json_each(?))")
    .raw();
  const cache = new Map<number, Cached>();

  const record = (): EmbedderRecord | undefined => {
    const row = readSetting.get(SETTING);
    return row ? (JSON.parse(row.value) as EmbedderRecord) : undefined;
  };

  /** The chatbot's in-memory copy, brought up to date with the table. */
  const current = (chatbotId: number, dimension: number): QuantizedVectors | undefined => {
    const { max_id: maxId, revision } = state.get(chatbotId, chatbotId)!;
    let cached = cache.get(chatbotId);
    if (maxId === null) {
      cache.delete(chatbotId);
      return undefined;
    }
    if (!cached || cached.revision !== revision || cached.index.dimension !== dimension) {
      cached = { index: createQuantizedVectors(dimension), revision, maxId: 0 };
      cache.set(chatbotId, cached);
    }
    if (maxId > cached.maxId) {
      for (const [id, blob] of rowsAfter.iterate(chatbotId, cached.maxId)) {
        if (blob.byteLength === dimension * 4) cached.index.add(id, toVector(blob));
        cached.maxId = id;
      }
    }
    return cached.index;
  };

  const similarities = (ids: number[], vector: Float32Array): Map<number, number> => {
    const out = new Map<number, number>();
    if (ids.length === 0) return out;
    for (const [id, blob] of byIds.all(JSON.stringify(ids))) out.set(id, dot(vector, toVector(blob)));
    return out;
  };

  return {
    record,

    /** Refuses an embedder other than the one the stored vectors were built with. */
    assertCompatible(spec: string, dimension?: number): void {
      const stored = record();
      if (!stored) return;
      if (stored.spec !== spec || (dimension !== undefined && stored.dimension !== dimension)) {
        throw new ChatsvcError(
          409,
          `The knowledge base was embedded with "${stored.spec}" (${stored.dimension} dimensions) but chatsvc is configured with "${spec}"` +
            `${dimension !== undefined && stored.spec === spec ? ` (${dimension} dimensions)` : ""}. ` +
            "Run `chatsvc kb reindex` to re-embed every chunk with the configured embedder (or configure the previous one).",
          { details: { stored_embedder: stored.spec, configured_embedder: spec } },
        );
      }
    },

    /** Inside a write transaction: records the embedder on first use. */
    ensure(spec: string, dimension: number): void {
      if (record()) return;
      writeSetting.run(SETTING, JSON.stringify({ spec, dimension } satisfies EmbedderRecord), nowIso());
    },

    /** Inside a write transaction: drops every vector and starts over for another embedder. */
    recreate(spec: string, dimension: number): void {
      deleteAll.run();
      writeSetting.run(SETTING, JSON.stringify({ spec, dimension } satisfies EmbedderRecord), nowIso());
    },

    insert(chunkId: number, chatbotId: number, vector: Float32Array): void {
      insert.run(chunkId, chatbotId, toBlob(vector));
    },

    /** Stores a chunk's vector in place of the one it has (if any). */
    replace(chunkId: number, chatbotId: number, vector: Float32Array): void {
      upsert.run(chunkId, chatbotId, toBlob(vector));
    },

    /** The chatbot's `k` nearest chunks by cosine distance (exact, float), nearest first; empty before any vector was stored. */
    nearest(chatbotId: number, vector: Float32Array, k: number): VectorHit[] {
      const stored = record();
      if (!stored || stored.dimension !== vector.length) return [];
      const index = current(chatbotId, stored.dimension);
      if (!index) return [];
      const ids = index.candidates(vector, Math.max(k * RESCORE_FACTOR, MIN_RESCORED));
      const scored = similarities(ids, vector);
      return [...scored]
        .sort((a, b) => b[1] - a[1])
        .slice(0, k)
        .map(([chunk_id, similarity]) => ({ chunk_id, distance: 1 - similarity }));
    },

    /** Cosine similarity of stored chunk vectors to `vector`, for candidates that only full-text search found. */
    similarities,
  };
}

export type VectorIndex = ReturnType<typeof createVectorIndex>;

/**
 * Databases from before `chunk_embeddings` kept vectors in a vec0 table
 * created at run time; copy them over once and drop it. Checked inside the
 * write transaction because another process may be doing the same.
 */
function migrateLegacyTable(sqlite: Sqlite): void {
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

function toBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

function toVector(blob: Buffer): Float32Array {
  // Blobs from SQLite need not be 4-byte aligned; copy when they are not.
  return blob.byteOffset % 4 === 0 ? new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4) : new Float32Array(new Uint8Array(blob).buffer);
}
