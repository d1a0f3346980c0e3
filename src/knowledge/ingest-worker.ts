// The ingestion worker's entry (built as its own file, `ingest-worker.js`): reads, converts, hashes, chunks and,
// for the hash embedder, embeds one ingestion's files ahead of the main thread, which only writes them
// (prepared-files.ts starts it; ingest.ts consumes what it sends, in order).
import { parentPort, workerData, type MessagePort, type TransferListItem } from "node:worker_threads";
import { ChatsvcError } from "../core/errors.js";
import { yieldCpuToProcess } from "../core/thread-priority.js";
import { chunkText, type ChunkSizing, type ChunkText } from "./chunking/index.js";
import { hashEmbed } from "./embedders/hash.js";
import { contentHash, embeddingText } from "./document-text.js";
import { LoadError, type LoadedDocument } from "./loaders/index.js";
import { loadFile } from "./loaders/files.js";

export interface PrepareSetup {
  /** Absolute paths of the files to prepare, in the order ingestion takes them. */
  files: string[];
  chunking: ChunkSizing;
  /** The hash embedder's dimension when the vectors are worked out here; null when the main thread embeds. */
  hashDimension: number | null;
  /** Chunks' worth of prepared files the main thread has not taken yet, at most: what bounds memory. */
  ahead: number;
  /** Where prepared files go, as {@link PreparedMessage}s, each announced by a {@link ReadyMessage} to the main thread. */
  port: MessagePort;
}

/**
 * One file prepared. A document expected to be skipped (its content is stored
 * already) comes with its text instead of chunks: the main thread decides,
 * and chunks it itself in the rare case it is not skipped after all.
 */
export type PreparedFile =
  | { kind: "failed"; error: string }
  | { kind: "empty" }
  | { kind: "document"; doc: Omit<LoadedDocument, "text">; hash: string; chunks: ChunkText[]; vectors: Float32Array | null }
  | { kind: "expected-skip"; doc: LoadedDocument; hash: string };

/** The next file, with how many chunks' worth it counts for. */
export interface PreparedMessage {
  file: PreparedFile;
  weight: number;
}

/** From the worker to the main thread: one more file is ready on the files' port; or why the worker stopped. */
export type ReadyMessage = { ready: true } | { crashed: string };

/**
 * From the main thread: chunks' worth of prepared files taken, so the worker may go on; or a page of the
 * chatbot's stored documents (sources and content hashes side by side), the last one with `complete`. A file
 * whose content is stored already is expected to be skipped, and is not chunked here.
 */
export type ToWorkerMessage = { taken: number } | { stored: { sources: string[]; hashes: string[] }; complete: boolean };

// Preparing files is background work: the main thread's writes and requests come first when they compete for a core.
yieldCpuToProcess();

const port = parentPort!;
const { files, chunking, hashDimension, ahead, port: prepared } = workerData as PrepareSetup;
const storedBySource = new Map<string, string>();
const storedHashes = new Set<string>();
let storedComplete = false;

let held = 0;
let wake: (() => void) | undefined;
port.on("message", (message: ToWorkerMessage) => {
  if ("taken" in message) held -= message.taken;
  else {
    const { sources, hashes } = message.stored;
    for (let i = 0; i < sources.length; i++) storedBySource.set(sources[i]!, hashes[i]!);
    for (const hash of hashes) storedHashes.add(hash);
    storedComplete = message.complete;
  }
  wake?.();
  wake = undefined;
});

/*
 * Files are read a few at a time ahead of the one being chunked: each read is
 * several round trips to libuv's thread pool, which left this thread waiting
 * for nearly half its time when they were awaited one file after another.
 */
const READ_AHEAD = 8;
type Read = { doc: LoadedDocument } | { failed: string } | { crashed: unknown };
const reads: Promise<Read>[] = [];
let nextRead = 0;

try {
  for (let i = 0; i < files.length; i++) {
    while (nextRead < files.length && reads.length < READ_AHEAD) reads.push(read(files[nextRead++]!));
    const loaded = await reads.shift()!;
    while (held >= ahead || !storedComplete) await new Promise<void>((resolve) => (wake = resolve));
    const { file, weight, transfer } = prepare(loaded);
    held += weight;
    prepared.postMessage({ file, weight } satisfies PreparedMessage, transfer);
    port.postMessage({ ready: true } satisfies ReadyMessage);
  }
} catch (error) {
  port.postMessage({ crashed: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies ReadyMessage);
}

/** A file loaded, or why not; never rejects, so reads waiting their turn cannot go unhandled. */
async function read(path: string): Promise<Read> {
  try {
    return { doc: await loadFile(path) };
  } catch (error) {
    if (error instanceof LoadError || error instanceof ChatsvcError) return { failed: error.message };
    return { crashed: error };
  }
}

function prepare(read: Read): { file: PreparedFile; weight: number; transfer: TransferListItem[] } {
  if ("crashed" in read) throw read.crashed;
  if ("failed" in read) return { file: { kind: "failed", error: read.failed }, weight: 1, transfer: [] };
  const { doc } = read;
  if (doc.text.trim() === "") return { file: { kind: "empty" }, weight: 1, transfer: [] };
  const hash = contentHash(doc.text);
  const storedHash = storedBySource.get(doc.source);
  if (storedHash !== undefined ? storedHash === hash : storedHashes.has(hash)) {
    return { file: { kind: "expected-skip", doc, hash }, weight: Math.max(1, Math.ceil(doc.text.length / chunking.size)), transfer: [] };
  }
  // Written by this ingestion, so the same content again (or the same file named twice) is expected to be skipped.
  storedBySource.set(doc.source, hash);
  storedHashes.add(hash);
  const chunks = chunkText(doc.format, doc.text, chunking);
  const { text: _text, ...fields } = doc;
  if (hashDimension === null || chunks.length === 0) return { file: { kind: "document", doc: fields, hash, chunks, vectors: null }, weight: Math.max(1, chunks.length), transfer: [] };
  const vectors = new Float32Array(chunks.length * hashDimension);
  for (let i = 0; i < chunks.length; i++) vectors.set(hashEmbed(embeddingText(chunks[i]!), hashDimension), i * hashDimension);
  return { file: { kind: "document", doc: fields, hash, chunks, vectors }, weight: chunks.length, transfer: [vectors.buffer] };
}
