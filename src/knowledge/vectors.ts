import type { Sqlite } from "../core/db/open.js";
import { nowIso } from "../core/clock.js";
import { ChatsvcError } from "../core/errors.js";

/** Which embedder built the stored vectors; one per database. */
export interface EmbedderRecord {
  spec: string;
  dimension: number;
}

const SETTING = "knowledge.embedder";

/** A chunk's distance to the query vector (cosine distance, 0 = same direction). */
export interface VectorHit {
  chunk_id: number;
  distance: number;
}

/**
 * The `chunk_vectors` vec0 table, created at run time because its dimension
 * depends on the embedder, and the settings row recording that embedder.
 * A trigger deletes a chunk's vector with the chunk (vec0 has no foreign keys),
 * which also covers cascades from deleted documents and chatbots.
 */
export function createVectorIndex(sqlite: Sqlite) {
  const readSetting = sqlite.prepare<[string], { value: string }>("SELECT value FROM settings WHERE key = ?");
  const writeSetting = sqlite.prepare<[string, string, string]>(
    "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
  );
  const tableExists = sqlite.prepare<[], { x: number }>("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'chunk_vectors'");

  // Statements on chunk_vectors can only be prepared once the table exists.
  let statements:
    | {
        insert: ReturnType<typeof sqlite.prepare<[bigint, bigint, Buffer]>>;
        knn: ReturnType<typeof sqlite.prepare<[Buffer, number, number], VectorHit>>;
        get: ReturnType<typeof sqlite.prepare<[bigint], { embedding: Buffer }>>;
      }
    | undefined;
  const prepared = () => {
    if (statements) return statements;
    if (!tableExists.get()) return undefined;
    statements = {
      insert: sqlite.prepare("INSERT INTO chunk_vectors (chunk_id, chatbot_id, embedding) VALUES (?, ?, ?)"),
      knn: sqlite.prepare("SELECT chunk_id, distance FROM chunk_vectors WHERE embedding MATCH ? AND k = ? AND chatbot_id = ? ORDER BY distance"),
      get: sqlite.prepare("SELECT embedding FROM chunk_vectors WHERE chunk_id = ?"),
    };
    return statements;
  };

  const create = (dimension: number) => {
    sqlite.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS chunk_vectors USING vec0(chunk_id integer primary key, chatbot_id integer partition key, embedding float[${dimension}] distance_metric=cosine);
       CREATE TRIGGER IF NOT EXISTS chunk_vectors_ad AFTER DELETE ON chunks BEGIN DELETE FROM chunk_vectors WHERE chunk_id = old.id; END;`,
    );
  };

  const record = (): EmbedderRecord | undefined => {
    const row = readSetting.get(SETTING);
    return row ? (JSON.parse(row.value) as EmbedderRecord) : undefined;
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

    /** Inside a write transaction: creates the table on first use and records the embedder. */
    ensure(spec: string, dimension: number): void {
      if (record()) return;
      create(dimension);
      writeSetting.run(SETTING, JSON.stringify({ spec, dimension } satisfies EmbedderRecord), nowIso());
    },

    /** Inside a write transaction: drops every vector and starts over for another embedder. */
    recreate(spec: string, dimension: number): void {
      sqlite.exec("DROP TRIGGER IF EXISTS chunk_vectors_ad; DROP TABLE IF EXISTS chunk_vectors;");
      statements = undefined;
      create(dimension);
      writeSetting.run(SETTING, JSON.stringify({ spec, dimension } satisfies EmbedderRecord), nowIso());
    },

    insert(chunkId: number, chatbotId: number, vector: Float32Array): void {
      prepared()!.insert.run(BigInt(chunkId), BigInt(chatbotId), toBlob(vector));
    },

    /** The chatbot's nearest chunks; empty before any vector was stored. */
    nearest(chatbotId: number, vector: Float32Array, k: number): VectorHit[] {
      const s = prepared();
      return s ? s.knn.all(toBlob(vector), Math.min(k, 4096), chatbotId) : [];
    },

    /** A stored vector, for scoring candidates that only full-text search found. */
    vectorOf(chunkId: number): Float32Array | undefined {
      const row = prepared()?.get.get(BigInt(chunkId));
      return row ? new Float32Array(row.embedding.buffer, row.embedding.byteOffset, row.embedding.byteLength / 4) : undefined;
    },
  };
}

export type VectorIndex = ReturnType<typeof createVectorIndex>;

function toBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}
