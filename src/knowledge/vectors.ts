import { ChatsvcError } from "../core/errors.js";
import type { ChangeFeed, EmbedderRecord, KnowledgeReads, VectorState } from "../core/storage/index.js";
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
export function createVectorIndex(store: KnowledgeReads, changes: ChangeFeed) {
  const cache = new Map<number, Cached>();
  /** One refresh per chatbot at a time: two searches must not both append the same rows. */
  const refreshing = new Map<number, { pending: Promise<QuantizedVectors | undefined>; ahead: boolean }>();
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

  /**
   * The chatbot's in-memory copy, brought up to date with the store (as of `known`, a state read during this search, when given).
   * A load ahead of searches (`ahead`) lets other work run between its pages and stops when its signal aborts: the
   * copy then holds the rows read so far, and the next search reads the rest.
   */
  const refresh = async (chatbotId: number, dimension: number, known?: VectorState, ahead?: AbortSignal): Promise<QuantizedVectors | undefined> => {
    const { max_id: maxId, revision } = known ?? (await store.vectorState(chatbotId));
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
      if (ahead) {
        await new Promise((resolve) => setImmediate(resolve));
        if (ahead.aborted) break;
      }
    }
    return cached.index;
  };

  const current = async (chatbotId: number, dimension: number, known?: VectorState, ahead?: AbortSignal): Promise<QuantizedVectors | undefined> => {
    const running = refreshing.get(chatbotId);
    if (running?.ahead && !ahead) {
      // A load ahead may stop part-way (its signal): a search waits for it, then brings the copy up to date itself
      // (with the state as it is then: one read before the load finished may be older than the copy).
      await running.pending.catch(() => {});
      return current(chatbotId, dimension);
    }
    if (running) return running.pending;
    const pending = refresh(chatbotId, dimension, known, ahead).finally(() => refreshing.delete(chatbotId));
    refreshing.set(chatbotId, { pending, ahead: ahead !== undefined });
    return pending;
  };

  /** The copy as it stands, when there is one of that dimension and no refresh is under way. */
  const standing = (chatbotId: number, dimension: number): Cached | undefined => {
    const cached = cache.get(chatbotId);
    return cached && cached.index.dimension === dimension && !refreshing.has(chatbotId) ? cached : undefined;
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

    /**
     * Loads the chatbot's copy now rather than at its first search (see `Knowledge.preload`); answers how many
     * vectors it holds. Stops early, between pages, once `signal` aborts.
     */
    async load(chatbotId: number, signal: AbortSignal): Promise<number> {
      const stored = await record();
      if (!stored || signal.aborted) return 0;
      return (await current(chatbotId, stored.dimension, undefined, signal))?.size ?? 0;
    },

    /**
     * The chatbot's `k` nearest chunks by cosine distance (exact, float), nearest first; empty before any vector was stored.
     * The copy in memory gives the candidates and the store's state comes back with their float vectors, in one
     * round trip: when that state shows the copy was stale, the copy catches up and the search runs again on it.
     */
    async nearest(chatbotId: number, vector: Float32Array, k: number): Promise<VectorHit[]> {
      const stored = await record();
      if (!stored || stored.dimension !== vector.length) return [];
      const ranked = async (index: QuantizedVectors) => {
        const found = index.candidates(vector, Math.max(k * RESCORE_FACTOR, MIN_RESCORED));
        // A candidate whose highest possible float score is below the k-th best lowest one ranks below k others: its vector is not read.
        const bar = found.length <= k ? -Infinity : found.map((c) => c.score - c.error).sort((x, y) => y - x)[k - 1]!;
        const { state, vectors } = await store.vectorsOf(
          chatbotId,
          found.filter((c) => c.score + c.error >= bar).map((c) => c.id),
        );
        const hits = vectors
          .map(([id, stored]): [number, number] => [id, dot(vector, stored)])
          .sort((a, b) => b[1] - a[1])
          .slice(0, k)
          .map(([chunk_id, similarity]) => ({ chunk_id, distance: 1 - similarity }));
        return { state, hits };
      };
      const cached = standing(chatbotId, stored.dimension);
      if (cached) {
        // Taken before the wait: a refresh for another search may move the copy on meanwhile.
        const { maxId, revision } = cached;
        const { state, hits } = await ranked(cached.index);
        if (state.max_id === maxId && state.revision === revision) return hits;
        const index = await current(chatbotId, stored.dimension, state);
        return index ? (await ranked(index)).hits : [];
      }
      const index = await current(chatbotId, stored.dimension);
      return index ? (await ranked(index)).hits : [];
    },
  };
}

export type VectorIndex = ReturnType<typeof createVectorIndex>;
