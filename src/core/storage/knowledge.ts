/** A document of a chatbot's knowledge base. */
export interface DocumentRecord {
  id: number;
  name: string;
  /** `file` or `url`. */
  type: string;
  /** Absolute path or URL: the identity a re-ingest updates by. */
  source: string;
  url: string | null;
  chunk_count: number;
  bytes: number;
  created_at: string;
  updated_at: string;
}

export interface DocumentFields {
  name: string;
  type: string;
  source: string;
  url: string | null;
  content_hash: string;
  chunk_count: number;
  bytes: number;
  /** A fetched page's validators and fetch time ({@link WebValidators}); all null for files and texts. */
  etag: string | null;
  last_modified: string | null;
  fetched_at: string | null;
}

/** What a page's server said about its version when it was last fetched, and when that was. */
export interface WebValidators {
  etag: string | null;
  last_modified: string | null;
  fetched_at: string;
}

/** A document fetched from its URL (`source`), as `kb sync` re-fetches it. */
export interface WebDocument {
  id: number;
  source: string;
  content_hash: string;
  etag: string | null;
  last_modified: string | null;
}

/** A chunk joined with what a reply's `sources` shows of its document. */
export interface ChunkRecord {
  id: number;
  document_id: number;
  heading: string;
  content: string;
  name: string;
  type: string;
  url: string | null;
}

/** Which embedder built the stored vectors; one per database. */
export interface EmbedderRecord {
  spec: string;
  dimension: number;
}

export interface NewChunk {
  heading: string;
  content: string;
  vector: Float32Array;
}

/** One ingestion batch: documents with their chunks and vectors. */
export interface DocumentBatch {
  chatbot_id: number;
  embedder: EmbedderRecord;
  documents: { fields: DocumentFields; chunks: NewChunk[] }[];
  now: string;
  /** Replace documents of these sources only where they still exist (sync): one removed meanwhile stays removed. */
  replace_only?: boolean;
}

/** Where a chatbot's vectors stand: new ones have higher chunk ids; `revision` grows when any is removed or replaced. */
export interface VectorState {
  max_id: number | null;
  revision: number;
}

/**
 * Documents, chunks, their full-text index and their vectors. Vectors are
 * float32; the in-process index in knowledge/ follows them through {@link VectorState}.
 */
export interface KnowledgeStore {
  /** Looked up before the write; {@link writeBatch} looks again inside its transaction. */
  documentBySource(chatbotId: number, source: string): Promise<{ id: number; content_hash: string } | undefined>;
  hasDocumentWithHash(chatbotId: number, contentHash: string): Promise<boolean>;
  /** Documents' sources and content hashes after id `afterId`, oldest first, at most `limit`: what a large ingestion expects to skip. */
  documentHashes(chatbotId: number, afterId: number, limit: number): Promise<{ id: number; source: string; content_hash: string }[]>;
  /**
   * One transaction: records the embedder when none is recorded yet; for each
   * document, replaces the chatbot's document of the same source (its old
   * chunks, full-text rows and vectors go) or inserts it; inserts chunks and vectors.
   */
  writeBatch(batch: DocumentBatch): Promise<{ added: number; updated: number }>;
  /** Oldest first. */
  documents(chatbotId: number): Promise<DocumentRecord[]>;
  /** The chatbot's documents fetched from their URL, oldest first. */
  webDocuments(chatbotId: number): Promise<WebDocument[]>;
  /** Chatbots that have at least one document fetched from its URL, or a remembered sitemap. */
  chatbotsWithWebDocuments(): Promise<number[]>;
  /** Remembers a sitemap the chatbot's pages were ingested from (once per URL). */
  rememberSitemap(chatbotId: number, url: string, now: string): Promise<void>;
  /** The chatbot's remembered sitemaps, oldest first. */
  sitemaps(chatbotId: number): Promise<{ id: number; url: string }[]>;
  /** Forgets a sitemap (its server says it is gone); false when there was none. */
  forgetSitemap(chatbotId: number, sitemapId: number): Promise<boolean>;
  /** Records a page found unchanged: its validators and fetch time. False when the document is gone. */
  markFetched(chatbotId: number, documentId: number, validators: WebValidators): Promise<boolean>;
  /** Removes a document with its chunks and vectors; false when the chatbot has no such document. */
  removeDocument(chatbotId: number, documentId: number): Promise<boolean>;
  hasChunks(chatbotId: number): Promise<boolean>;
  /**
   * Chunks by id (any order; unknown ids left out), each of `vectorsOf` with its
   * stored vector when it has one: a search needs both of chunks only full-text found.
   */
  chunks(ids: number[], vectorsOf?: number[]): Promise<(ChunkRecord & { vector?: Float32Array })[]>;
  /** Every chunk of a chatbot in id order, for re-embedding. */
  chunksOfChatbot(chatbotId: number): Promise<{ id: number; heading: string; content: string }[]>;
  chatbotsWithChunks(): Promise<number[]>;
  /**
   * Full-text candidates of one chatbot, best first, at most `limit` chunk ids.
   * `words` are the question's distinct content words (no stop words); the
   * engine picks among them and never fails on what visitors type.
   */
  fullText(chatbotId: number, words: string[], limit: number): Promise<number[]>;
  /** Of `words` (lower-case), those found in at least one chunk of any chatbot. */
  knownWords(words: string[]): Promise<string[]>;

  embedder(): Promise<EmbedderRecord | undefined>;
  vectorState(chatbotId: number): Promise<VectorState>;
  /** The chatbot's first `limit` vectors with chunk ids above `afterId`, in id order. */
  vectorsAfter(chatbotId: number, afterId: number, limit: number): Promise<[chunkId: number, vector: Float32Array][]>;
  /**
   * The stored vectors of `chunkIds` with the chatbot's {@link VectorState}, read
   * together: a search checks the in-process copy it took candidates from against
   * that state instead of asking for it first.
   */
  vectorsOf(chatbotId: number, chunkIds: number[]): Promise<{ state: VectorState; vectors: [chunkId: number, vector: Float32Array][] }>;
  /**
   * One transaction: with `recreate`, drops every vector and records `embedder`;
   * then stores each chunk's new vector in place of its old one.
   */
  replaceVectors(embedder: EmbedderRecord, recreate: boolean, vectors: { chatbot_id: number; chunk_id: number; vector: Float32Array }[]): Promise<void>;
}

/** What a search reads, and all it reads: an engine can serve it from another connection (a search thread's). */
export type KnowledgeReads = Pick<KnowledgeStore, "hasChunks" | "chunks" | "fullText" | "knownWords" | "embedder" | "vectorState" | "vectorsAfter" | "vectorsOf">;
