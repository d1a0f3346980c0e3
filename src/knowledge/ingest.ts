import { extname } from "node:path";
import type { ChunkingOptions, IngestOptions } from "../core/config.js";
import { nowIso } from "../core/clock.js";
import { ChatsvcError } from "../core/errors.js";
import type { KnowledgeStore } from "../core/storage/index.js";
import { chunkText, type ChunkText } from "./chunking/index.js";
import { contentHash, embeddingText } from "./document-text.js";
import type { Embedder } from "./embedders/index.js";
import { expandInputs, fetchUrl, loadSitemapFile, loadTarget, LoadError, targetLabel, type LoadedDocument, type LoadTarget, type Sitemap } from "./loaders/index.js";
import { prepareFiles, type PreparedFile, type StoredPage } from "./prepared-files.js";
import { sitemapPages } from "./sitemap-pages.js";
import type { IngestCallOptions, IngestInput, IngestReport } from "./types.js";
import type { VectorIndex } from "./vectors.js";

/**
 * Chunks embedded and written per transaction: bounds memory and lock time on
 * big folders. A SQLite write holds the event loop for its whole transaction,
 * so smaller batches keep requests answered during ingestion; below this size
 * the commits start to cost throughput (bench scenario 5).
 */
const BATCH_CHUNKS = 128;

/**
 * An ingestion of at least this many files prepares them in the ingestion
 * worker (read, chunked and, with the hash embedder, embedded on another core
 * while this thread writes); for fewer, starting the worker (loading its
 * modules) costs about what it would save.
 */
const WORKER_MIN_FILES = 64;

/** Stored documents read at a time when the ingestion worker is told what is stored. */
const STORED_PAGE = 1000;

/** Why an empty document is left out. */
const EMPTY = "empty: no text to index";

export { contentHash, embeddingText } from "./document-text.js";

/** A document loaded, hashed and chunked, waiting to be embedded and written. */
export interface PendingDocument {
  doc: Omit<LoadedDocument, "text">;
  hash: string;
  chunks: ChunkText[];
  /** When a web page was fetched; null for files and texts. */
  fetchedAt: string | null;
  /** The chunks' vectors, one per chunk, when the ingestion worker worked them out with the same embedder. */
  vectors?: Float32Array[];
}

export interface IngestDeps {
  store: KnowledgeStore;
  vectors: VectorIndex;
  embedder: () => Embedder;
  chunking: Required<ChunkingOptions>;
  /** How URLs are fetched: address policy and timeout. */
  fetching: Required<IngestOptions>;
}

/**
 * Loads, chunks, embeds and stores inputs into one chatbot's knowledge base,
 * streaming: at most {@link BATCH_CHUNKS} chunks are held before they are
 * embedded and written in one storage write. A document whose source is known
 * is replaced when its content changed and skipped when not; new content
 * already stored under another source is skipped as a duplicate. A URL that
 * answers with a sitemap (or sitemap index), or a `.xml` sitemap file, adds
 * the pages it lists, bounded by `sitemapMaxPages`, each fetched under the
 * same address policy. A failing
 * input is reported and the batch goes on; an empty one, and a folder's file
 * of an unsupported type, are listed in `skipped_inputs` with the reason.
 * Many files are read, chunked and (hash embedder) embedded in a worker
 * thread a couple of writes ahead (prepared-files.ts), with the same results;
 * the checks against what is stored and the writes stay here, in order.
 *
 * @example
 * await ingest(deps, bot.id, ["./docs"], { onProgress: (p) => console.log(p.done, p.total) });
 */
export async function ingest(
  { store, vectors, embedder, chunking, fetching: configured }: IngestDeps,
  chatbotId: number,
  inputs: IngestInput[],
  { onProgress, sitemapMaxPages = configured.sitemapMaxPages }: IngestCallOptions = {},
): Promise<IngestReport> {
  if (!Number.isInteger(sitemapMaxPages) || sitemapMaxPages < 1) throw ChatsvcError.validation({ sitemapMaxPages: ["sitemapMaxPages must be a positive integer."] });
  const fetching = { ...configured, sitemapMaxPages };
  const started = performance.now();
  const { targets, failed, skipped } = await expandInputs(inputs);
  const report: IngestReport = { added: 0, updated: 0, skipped: 0, skipped_inputs: skipped, failed, chunks: 0, ms: 0 };
  const model = embedder();
  // Refuse early, before reading anything, when the stored vectors came from another embedder.
  await vectors.assertCompatible(model.spec);

  let pending: PendingDocument[] = [];
  let pendingChunks = 0;
  const hashesInBatch = new Set<string>();
  // URLs already queued, so a page both given and listed in a sitemap (or in two sitemaps) is fetched once.
  const queued = new Set(targets.flatMap((t) => (t.kind === "url" ? [new URL(t.url).href] : [])));

  const flush = async () => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    pendingChunks = 0;
    hashesInBatch.clear();
    const written = await writeDocuments({ store, vectors }, model, chatbotId, batch);
    report.added += written.added;
    report.updated += written.updated;
    report.chunks += written.chunks;
  };

  const files = targets.flatMap((t) => (isPreparedAhead(t) ? [t.path] : []));
  const preparing =
    files.length >= WORKER_MIN_FILES
      ? prepareFiles({
          files,
          chunking,
          hashDimension: model.spec === "hash" ? (model.dimension ?? null) : null,
          ahead: 2 * BATCH_CHUNKS,
        }, storedDocuments(store, chatbotId))
      : undefined;
  try {
    for (let i = 0; i < targets.length; i++) {
      const target = targets[i]!;
      const label = targetLabel(target);
      onProgress?.({ done: i, total: targets.length, current: label });
      let read: ReadDocument;
      if (preparing && isPreparedAhead(target)) {
        const prepared = await preparing.next();
        if (prepared.kind === "failed") {
          report.failed.push({ input: label, error: prepared.error });
          continue;
        }
        if (prepared.kind === "empty") {
          report.skipped_inputs.push({ input: label, reason: EMPTY });
          continue;
        }
        read = fromPrepared(prepared, chunking);
      } else {
        let doc: LoadedDocument;
        try {
          const loaded = await load(target, fetching);
          if (loaded.kind === "pages") {
            // A sitemap on the web is remembered, so `kb sync` can add the pages it lists later on.
            if (target.kind === "url") await store.rememberSitemap(chatbotId, new URL(target.url).href, nowIso());
            const found = await sitemapPages(label, loaded.sitemap, fetching);
            report.failed.push(...found.failed);
            report.skipped_inputs.push(...found.skipped);
            for (const url of found.pages) {
              if (queued.has(url)) continue;
              queued.add(url);
              targets.push({ kind: "url", url, sitemap: label });
            }
            continue;
          }
          doc = loaded.doc;
        } catch (error) {
          if (error instanceof LoadError || error instanceof ChatsvcError) {
            report.failed.push({ input: label, error: error.message });
            continue;
          }
          throw error;
        }
        // An empty document is noted, not failed: one empty file must not turn a whole run red.
        if (doc.text.trim() === "") {
          report.skipped_inputs.push({ input: label, reason: EMPTY });
          continue;
        }
        read = { doc, hash: contentHash(doc.text), chunks: () => chunkText(doc.format, doc.text, chunking) };
      }
      const { doc, hash } = read;
      const fetchedAt = doc.web ? nowIso() : null;
      const existing = await store.documentBySource(chatbotId, doc.source);
      if (existing ? existing.content_hash === hash : hashesInBatch.has(hash) || (await store.hasDocumentWithHash(chatbotId, hash))) {
        // An unchanged page may come with new validators: keep them, so the next sync can ask "changed since?".
        if (existing && doc.web) await store.markFetched(chatbotId, existing.id, { ...doc.web, fetched_at: fetchedAt! });
        report.skipped++;
        continue;
      }
      const chunks = read.chunks();
      if (chunks.length === 0) {
        report.failed.push({ input: label, error: "no text found" });
        continue;
      }
      pending.push({ doc, hash, chunks, fetchedAt, ...(read.vectors && { vectors: read.vectors }) });
      hashesInBatch.add(hash);
      pendingChunks += chunks.length;
      if (pendingChunks >= BATCH_CHUNKS) await flush();
    }
    await flush();
  } finally {
    await preparing?.close();
  }
  onProgress?.({ done: targets.length, total: targets.length, current: "" });
  report.ms = Math.round(performance.now() - started);
  return report;
}

/** A document read and hashed, to be skipped or written: its chunks (worked out when needed) and, when known already, their vectors. */
interface ReadDocument {
  doc: Omit<LoadedDocument, "text">;
  hash: string;
  chunks: () => ChunkText[];
  vectors?: Float32Array[];
}

/** Stored documents read in pages, with a turn of the event loop between two (SQLite reads hold this thread). */
async function* storedDocuments(store: KnowledgeStore, chatbotId: number): AsyncGenerator<StoredPage> {
  for (let afterId = 0; ; ) {
    const page = await store.documentHashes(chatbotId, afterId, STORED_PAGE);
    if (page.length > 0) yield page;
    if (page.length < STORED_PAGE) return;
    afterId = page.at(-1)!.id;
    await new Promise(setImmediate);
  }
}

/** Files (sitemaps aside) are what the ingestion worker prepares. */
function isPreparedAhead(target: LoadTarget): target is Extract<LoadTarget, { kind: "file" }> {
  return target.kind === "file" && extname(target.path).toLowerCase() !== ".xml";
}

function fromPrepared(prepared: Extract<PreparedFile, { kind: "document" | "expected-skip" }>, chunking: Required<ChunkingOptions>): ReadDocument {
  if (prepared.kind === "expected-skip") {
    const { doc } = prepared;
    return { doc, hash: prepared.hash, chunks: () => chunkText(doc.format, doc.text, chunking) };
  }
  const { doc, hash, chunks, vectors } = prepared;
  if (!vectors) return { doc, hash, chunks: () => chunks };
  const dimension = vectors.length / chunks.length;
  return { doc, hash, chunks: () => chunks, vectors: chunks.map((_, i) => vectors.subarray(i * dimension, (i + 1) * dimension)) };
}

/** A target read: a document, or a sitemap whose pages are to be ingested. */
type Loaded = { kind: "document"; doc: LoadedDocument } | { kind: "pages"; sitemap: Sitemap };

async function load(target: LoadTarget, fetching: Required<IngestOptions>): Promise<Loaded> {
  if (target.kind === "file" && extname(target.path).toLowerCase() === ".xml") return { kind: "pages", sitemap: await loadSitemapFile(target.path) };
  if (target.kind !== "url") return { kind: "document", doc: await loadTarget(target) };
  // Without validators the fetch is unconditional, so a 304 cannot come back as "not-modified".
  const fetched = await fetchUrl(target.url, fetching);
  if (fetched.kind === "page") return { kind: "document", doc: fetched.doc };
  if (fetched.kind === "sitemap" && !target.sitemap) return { kind: "pages", sitemap: fetched.sitemap };
  throw new LoadError(fetched.kind === "sitemap" ? `a sitemap, listed as a page by ${target.sitemap}` : "HTTP 304 Not Modified to an unconditional request");
}

/**
 * Embeds documents' chunks and writes them in one storage write (one
 * transaction), replacing documents of the same source; with `replaceOnly`
 * (sync) a document removed meanwhile is not written back. Used by ingestion and sync.
 */
export async function writeDocuments(
  { store, vectors }: Pick<IngestDeps, "store" | "vectors">,
  model: Embedder,
  chatbotId: number,
  batch: PendingDocument[],
  { replaceOnly = false }: { replaceOnly?: boolean } = {},
): Promise<{ added: number; updated: number; chunks: number }> {
  // Chunks the ingestion worker embedded already are not embedded again.
  const texts = batch.flatMap((p) => (p.vectors ? [] : p.chunks.map(embeddingText)));
  const embedded = texts.length > 0 ? await model.embed(texts) : [];
  const dimension = (embedded[0] ?? batch.find((p) => p.vectors)!.vectors![0]!).length;
  await vectors.assertCompatible(model.spec, dimension);
  let v = 0;
  const documents = batch.map(({ doc, hash, chunks, fetchedAt, vectors: known }) => ({
    fields: {
      name: doc.name,
      type: doc.type,
      source: doc.source,
      url: doc.url,
      content_hash: hash,
      chunk_count: chunks.length,
      bytes: doc.bytes,
      etag: doc.web?.etag ?? null,
      last_modified: doc.web?.last_modified ?? null,
      fetched_at: fetchedAt,
    },
    chunks: chunks.map((chunk, i) => ({ heading: chunk.heading, content: chunk.content, vector: known ? known[i]! : embedded[v++]! })),
  }));
  const written = await store.writeBatch({ chatbot_id: chatbotId, embedder: { spec: model.spec, dimension }, documents, now: nowIso(), replace_only: replaceOnly });
  vectors.forgetRecord();
  return { ...written, chunks: batch.reduce((sum, p) => sum + p.chunks.length, 0) };
}
