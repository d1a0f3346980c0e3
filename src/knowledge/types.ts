import type { DocumentRecord } from "../core/storage/index.js";
import type { QuestionCandidate, QuestionMatch } from "./question-match.js";

export type { QuestionCandidate, QuestionMatch } from "./question-match.js";

/** A chunk found for a query, with what `sources` shows about its document. */
export interface RetrievedChunk {
  chunk_id: number;
  document_id: number;
  content: string;
  /** Heading path, e.g. `Install > From npm`; empty when none. */
  heading: string;
  /** Document name (file name or page title). */
  name: string;
  /**
   * A file's title: the top of the chunk's heading path (a Markdown document's
   * first heading), when there is one other than the name; unset for web pages, named by their title.
   */
  title?: string;
  /** `file` or `url`. */
  type: string;
  url: string | null;
  /** Relevance in 0..1. */
  score: number;
}

/** Something to ingest: a file or folder path, a URL, or text given directly. */
export type IngestInput = string | { name: string; content: string; format?: "md" | "txt" | "html" | "json"; url?: string };

export interface IngestFailure {
  input: string;
  error: string;
}

/** An input left out on purpose, not an error: a folder's file of a type the loaders do not read, an empty file. */
export interface IngestSkip {
  input: string;
  reason: string;
}

export interface IngestReport {
  added: number;
  updated: number;
  /** Documents already stored: unchanged, or the same content under another source. */
  skipped: number;
  /** Inputs left out, each with the reason; they do not make the run fail. */
  skipped_inputs: IngestSkip[];
  failed: IngestFailure[];
  /** Chunks written by this run. */
  chunks: number;
  ms: number;
}

/** A document of a chatbot's knowledge base. */
export type KnowledgeDocument = DocumentRecord;

/** A web document a sync touched: its id and the URL it was ingested from. */
export interface SyncedDocument {
  id: number;
  url: string;
}

/** What re-fetching a chatbot's web documents did. */
export interface SyncReport {
  /** Web documents looked at (pages just added from a sitemap not counted). */
  checked: number;
  /** Pages the chatbot's sitemaps list now that were not ingested yet: added. */
  added: SyncedDocument[];
  /** Pages the server said were not modified (304), or whose text hashed the same: not re-embedded. */
  unchanged: number;
  /** Pages whose text changed: re-chunked, re-embedded and replaced. */
  updated: SyncedDocument[];
  /** Pages the server answered 404 or 410 for: removed with their chunks. */
  removed: (SyncedDocument & { status: number })[];
  /**
   * Pages that could not be checked (other HTTP errors, timeouts, refused addresses): kept as they were;
   * also sitemaps that could not be read and new pages that could not be added (`id` null).
   */
  failed: { id: number | null; url: string; error: string }[];
  /** Chunks written. */
  chunks: number;
  ms: number;
}

/** One background sync round over every chatbot with web documents. */
export interface SyncRound {
  chatbots: { slug: string; report: SyncReport }[];
  /** True when the round stopped early because the service was closing. */
  aborted: boolean;
}

export interface SearchOptions {
  /** How many chunks at most. Default: the service's `retrieval.k`. */
  k?: number;
  /** Keep chunks scoring below the relevance threshold too. Default false. */
  includeBelowThreshold?: boolean;
}

/** {@link SearchOptions} of a chat turn's search. */
export interface ChatSearchOptions extends SearchOptions {
  /** The search thread (when there is one) also works out the extractive model's answer over the chunks it found (`extractAnswer`). */
  extract?: boolean;
}

export interface IngestCallOptions {
  onProgress?: (p: IngestProgress) => void;
  /** Pages taken at most from one sitemap in this run. Default: the service's `ingest.sitemapMaxPages` (1000). */
  sitemapMaxPages?: number;
}

export interface IngestProgress {
  done: number;
  total: number;
  current: string;
}

/** A chatbot's knowledge base: `service.knowledge`. */
export interface Knowledge {
  /** Ingests files, folders, URLs or texts into a chatbot's knowledge base. */
  ingest(slug: string, inputs: IngestInput[], options?: IngestCallOptions): Promise<IngestReport>;
  /** The chatbot's most relevant chunks for a query, best first, at or above the threshold. */
  search(slug: string, query: string, options?: SearchOptions): Promise<RetrievedChunk[]>;
  /** {@link search} by chatbot id (the chat pipeline has the id already). */
  searchChatbot(chatbotId: number, query: string, options?: ChatSearchOptions): Promise<RetrievedChunk[]>;
  /**
   * Loads every chatbot's vectors into memory now (where searches run: the search thread when there is one)
   * rather than at each chatbot's first search, which on a large knowledge base waits seconds for them.
   * `chatsvc serve` starts this once listening. One chatbot at a time, letting searches run between pages
   * of vectors; `signal` stops it between chatbots (and between pages outside a search thread, whose own
   * loads stop when the service closes). Answers the chatbots it went through and the vectors they hold.
   */
  preload(options?: { signal?: AbortSignal }): Promise<{ chatbots: number; vectors: number }>;
  list(slug: string): Promise<KnowledgeDocument[]>;
  remove(slug: string, documentId: number): Promise<void>;
  /** Re-embeds every chunk (of one chatbot, or all) with the configured embedder. */
  reindex(slug?: string): Promise<{ chunks: number; ms: number }>;
  hasKnowledge(chatbotId: number): Promise<boolean>;
  /**
   * Re-fetches the chatbot's documents that came from URLs: unchanged pages stay (conditional requests,
   * then content hashes), changed ones are replaced, pages answering 404 or 410 are removed, other failures reported.
   */
  sync(slug: string, options?: { signal?: AbortSignal }): Promise<SyncReport>;
  /**
   * {@link sync} for every chatbot with web documents, as `syncEvery` runs it in the background: on one
   * instance at a time when several share the database (a lease), and with `ifOlderThanMs` only when the
   * last completed round is at least that old. Undefined when it did not run for either reason.
   */
  syncAll(options?: { ifOlderThanMs?: number; signal?: AbortSignal }): Promise<SyncRound | undefined>;
  /** Calls `listener` after each {@link syncAll} round this service ran. Returns a function that unsubscribes. */
  onSyncRound(listener: (round: SyncRound) => void): () => void;
  /**
   * The stored question (e.g. an answer correction's) that a visitor question
   * asks, with retrieval's word handling and embedder, when one reaches the
   * match threshold (see src/knowledge/question-match.ts); else undefined.
   */
  closestQuestion(question: string, candidates: readonly QuestionCandidate[]): Promise<QuestionMatch | undefined>;
}
