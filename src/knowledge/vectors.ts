import { ChatsvcError } from "../core/errors.js";
import type { ChangeFeed, EmbedderRecord, KnowledgeStore } from "../core/storage/index.js";
import { dot } from "./embedders/index.js";
import { createQuantizedVectors, type QuantizedVectors } from "./quantized-vectors.js";

export type { EmbedderRecord };

/**
 * Approximate candidates re-scored in float per nearest neighbour asked for:
 * int8 rounding only reorders near-ties, so a small margin keeps recall exact in practice.
 */
const RESCORE_FACTOR = 2;
const MIN_RESCORED = 32;
/**
 * Stored vectors read per query while loading the in-memory copy: the float
 * rows of a whole large base at once would be hundreds of MB of short-lived
 * buffers, which the process keeps as RSS long after they are garbage.
 */
const LOAD_PAGE = 2048;

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
 * Nearest-neighbour search over the stored chunk vectors: per chatbot an
 * in-memory int8 copy gives candidates that are then re-scored in float. The
 * copy follows the store, also when another process or instance writes: added
 * vectors have higher chunk ids, and the store's revision counts removed or
 * replaced ones. The embedder record is re-read when the storage reports a
 * settings change made elsewhere, or after this process wrote it.
 */
export function createVectorIndex(store: KnowledgeStore, changes: ChangeFeed) {
  const cache = new Map<number, Cached>();
  /** One refresh per chatbot at a time: two searches must not both append the same rows. */
  const refreshing = new Map<number, Promise<QuantizedVectors | undefined>>();
  let embedder: { version: number; value: Promise<EmbedderRecord | undefined> } | undefined;

  const record = (): Promise<EmbedderRecord | undefined> => {
    const version = changes.version("settings");
    if (!embedder || embedder.version !== version) {
      const value = store.embedder().catch((error: unknown) => {
        embedder = undefined;
        throw error;
      });
      embedder = { version, value };
    }
    return embedder.value;
  };

  /** The chatbot's in-memory copy, brought up to date with the store. */
  const refresh = async (chatbotId: number, dimension: number): Promise<QuantizedVectors | undefined> => {
    const { max_id: maxId, revision } = await store.vectorState(chatbotId);
    let cached = cache.get(chatbotId);
    if (maxId === null) {
      cache.delete(chatbotId);
      return undefined;
    }
    if (!cached || cached.revision !== revision || cached.index.dimension !== dimension) {
      cached = { index: createQuantizedVectors(dimension), revision, maxId: 0 };
      cache.set(chatbotId, cached);
    }
    while (maxId > cached.maxId) {
      const page = await store.vectorsAfter(chatbotId, cached.maxId, LOAD_PAGE);
      for (const [id, vector] of page) {
        if (vector.length === dimension) cached.index.add(id, vector);
        cached.maxId = id;
      }
      if (page.length < LOAD_PAGE) break;
    }
    return cached.index;
  };

  const current = (chatbotId: number, dimension: number): Promise<QuantizedVectors | undefined> => {
    let pending = refreshing.get(chatbotId);
    if (!pending) {
      pending = refresh(chatbotId, dimension).finally(() => refreshing.delete(chatbotId));
      refreshing.set(chatbotId, pending);
    }
    return pending;
  };

  const similarities = async (ids: number[], vector: Float32Array): Promise<Map<number, number>> => {
    const out = new Map<number, number>();
    if (ids.length === 0) return out;
    for (const [id, stored] of await store.vectorsOf(ids)) out.set(id, dot(vector, stored));
    return out;
  };

  return {
    record,

    /** Drops the remembered embedder record after this process changed it. */
    forgetRecord(): void {
      embedder = undefined;
    },

    /** Refuses an embedder other than the one the stored vectors were built with. */
    async assertCompatible(spec: string, dimension?: number): Promise<void> {
      const stored = await record();
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

    /** The chatbot's `k` nearest chunks by cosine distance (exact, float), nearest first; empty before any vector was stored. */
    async nearest(chatbotId: number, vector: Float32Array, k: number): Promise<VectorHit[]> {
      const stored = await record();
      if (!stored || stored.dimension !== vector.length) return [];
      const index = await current(chatbotId, stored.dimension);
      if (!index) return [];
      const found = index.candidates(vector, Math.max(k * RESCORE_FACTOR, MIN_RESCORED));
      // A candidate whose highest possible float score is below the k-th best lowest one ranks below k others: its vector is not read.
      const bar = found.length <= k ? -Infinity : found.map((c) => c.score - c.error).sort((x, y) => y - x)[k - 1]!;
      const scored = await similarities(found.filter((c) => c.score + c.error >= bar).map((c) => c.id), vector);
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
