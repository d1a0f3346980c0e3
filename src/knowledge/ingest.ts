import { createHash } from "node:crypto";
import type { ChunkingOptions, IngestOptions } from "../core/config.js";
import { nowIso } from "../core/clock.js";
import { ChatsvcError } from "../core/errors.js";
import type { KnowledgeStore } from "../core/storage/index.js";
import { chunkText, type ChunkText } from "./chunking/index.js";
import type { Embedder } from "./embedders/index.js";
import { expandInputs, loadTarget, LoadError, targetLabel, type LoadedDocument } from "./loaders/index.js";
import type { IngestInput, IngestProgress, IngestReport } from "./types.js";
import type { VectorIndex } from "./vectors.js";

/** Chunks embedded and written per transaction: bounds memory and lock time on big folders. */
const BATCH_CHUNKS = 256;

interface Pending {
  doc: LoadedDocument;
  hash: string;
  chunks: ChunkText[];
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
 * already stored under another source is skipped as a duplicate. A failing
 * input is reported and the batch goes on; an empty one, and a folder's file
 * of an unsupported type, are listed in `skipped_inputs` with the reason.
 *
 * @example
 * await ingest(deps, bot.id, ["./docs"], { onProgress: (p) => console.log(p.done, p.total) });
 */
export async function ingest(
  { store, vectors, embedder, chunking, fetching }: IngestDeps,
  chatbotId: number,
  inputs: IngestInput[],
  { onProgress }: { onProgress?: (p: IngestProgress) => void } = {},
): Promise<IngestReport> {
  const started = performance.now();
  const { targets, failed, skipped } = await expandInputs(inputs);
  const report: IngestReport = { added: 0, updated: 0, skipped: 0, skipped_inputs: skipped, failed, chunks: 0, ms: 0 };
  const model = embedder();
  // Refuse early, before reading anything, when the stored vectors came from another embedder.
  await vectors.assertCompatible(model.spec);

  let pending: Pending[] = [];
  let pendingChunks = 0;
  const hashesInBatch = new Set<string>();

  const flush = async () => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    pendingChunks = 0;
    hashesInBatch.clear();
    const texts = batch.flatMap((p) => p.chunks.map(embeddingText));
    const embedded = await model.embed(texts);
    const dimension = embedded[0]!.length;
    await vectors.assertCompatible(model.spec, dimension);
    let v = 0;
    const documents = batch.map(({ doc, hash, chunks }) => ({
      fields: { name: doc.name, type: doc.type, source: doc.source, url: doc.url, content_hash: hash, chunk_count: chunks.length, bytes: doc.bytes },
      chunks: chunks.map((chunk) => ({ heading: chunk.heading, content: chunk.content, vector: embedded[v++]! })),
    }));
    const written = await store.writeBatch({ chatbot_id: chatbotId, embedder: { spec: model.spec, dimension }, documents, now: nowIso() });
    vectors.forgetRecord();
    report.added += written.added;
    report.updated += written.updated;
    report.chunks += texts.length;
  };

  for (let i = 0; i < targets.length; i++) {
    const target = targets[i]!;
    const label = targetLabel(target);
    onProgress?.({ done: i, total: targets.length, current: label });
    let doc: LoadedDocument;
    try {
      doc = await loadTarget(target, fetching);
    } catch (error) {
      if (error instanceof LoadError || error instanceof ChatsvcError) {
        report.failed.push({ input: label, error: error.message });
        continue;
      }
      throw error;
    }
    // An empty document is noted, not failed: one empty file must not turn a whole run red.
    if (doc.text.trim() === "") {
      report.skipped_inputs.push({ input: label, reason: "empty: no text to index" });
      continue;
    }
    const hash = createHash("sha256").update(doc.text).digest("hex");
    const existing = await store.documentBySource(chatbotId, doc.source);
    if (existing ? existing.content_hash === hash : hashesInBatch.has(hash) || (await store.hasDocumentWithHash(chatbotId, hash))) {
      report.skipped++;
      continue;
    }
    const chunks = chunkText(doc.format, doc.text, chunking);
    if (chunks.length === 0) {
      report.failed.push({ input: label, error: "no text found" });
      continue;
    }
    pending.push({ doc, hash, chunks });
    hashesInBatch.add(hash);
    pendingChunks += chunks.length;
    if (pendingChunks >= BATCH_CHUNKS) await flush();
  }
  await flush();
  onProgress?.({ done: targets.length, total: targets.length, current: "" });
  report.ms = Math.round(performance.now() - started);
  return report;
}

/** What gets embedded for a chunk: the heading path gives short chunks their context. */
export function embeddingText(chunk: { heading: string; content: string }): string {
  return chunk.heading ? `${chunk.heading}\n${chunk.content}` : chunk.content;
}
