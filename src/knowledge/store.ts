import type { Sqlite } from "../core/db/open.js";
import type { KnowledgeDocument } from "./types.js";

export interface DocumentFields {
  name: string;
  type: string;
  source: string;
  url: string | null;
  content_hash: string;
  chunk_count: number;
  bytes: number;
}

/** A stored chunk joined with what `sources` shows about its document. */
export interface ChunkRow {
  id: number;
  document_id: number;
  heading: string;
  content: string;
  name: string;
  type: string;
  url: string | null;
}

/** Statements on documents and chunks, prepared once per service. */
export function createDocumentStore(sqlite: Sqlite) {
  const bySource = sqlite.prepare<[number, string], { id: number; content_hash: string }>("SELECT id, content_hash FROM documents WHERE chatbot_id = ? AND source = ?");
  const byHash = sqlite.prepare<[number, string], { id: number }>("SELECT id FROM documents WHERE chatbot_id = ? AND content_hash = ? LIMIT 1");
  const insertDoc = sqlite.prepare<[number, string, string, string, string | null, string, number, number, string, string], { id: number }>(
    `INSERT INTO documents (chatbot_id, name, type, source, url, content_hash, chunk_count, bytes, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
  );
  const updateDoc = sqlite.prepare<[string, string, string | null, string, number, number, string, number]>(
    "UPDATE documents SET name = ?, type = ?, url = ?, content_hash = ?, chunk_count = ?, bytes = ?, updated_at = ? WHERE id = ?",
  );
  const deleteChunks = sqlite.prepare<[number]>("DELETE FROM chunks WHERE document_id = ?");
  const insertChunk = sqlite.prepare<[number, number, number, string, string]>("INSERT INTO chunks (document_id, chatbot_id, ordinal, heading, content) VALUES (?, ?, ?, ?, ?)");
  const list = sqlite.prepare<[number], KnowledgeDocument>(
    "SELECT id, name, type, source, url, chunk_count, bytes, created_at, updated_at FROM documents WHERE chatbot_id = ? ORDER BY id",
  );
  const deleteDoc = sqlite.prepare<[number, number]>("DELETE FROM documents WHERE id = ? AND chatbot_id = ?");
  const hasChunks = sqlite.prepare<[number], { x: number }>("SELECT 1 AS x FROM chunks WHERE chatbot_id = ? LIMIT 1");
  const chunksByIds = sqlite.prepare<[string], ChunkRow>(
    `SELECT c.id, c.document_id, c.heading, c.content, d.name, d.type, d.url
       FROM chunks c JOIN documents d ON d.id = c.document_id
      WHERE c.id IN (SELECT value FROM json_each(?))`,
  );
  const chunksOfBot = sqlite.prepare<[number], { id: number; chatbot_id: number; heading: string; content: string }>(
    "SELECT id, chatbot_id, heading, content FROM chunks WHERE chatbot_id = ? ORDER BY id",
  );
  const botsWithChunks = sqlite.prepare<[], { chatbot_id: number }>("SELECT DISTINCT chatbot_id FROM chunks ORDER BY chatbot_id");

  return {
    bySource: (chatbotId: number, source: string) => bySource.get(chatbotId, source),
    byHash: (chatbotId: number, hash: string) => byHash.get(chatbotId, hash),
    insertDocument(chatbotId: number, d: DocumentFields, now: string): number {
      return insertDoc.get(chatbotId, d.name, d.type, d.source, d.url, d.content_hash, d.chunk_count, d.bytes, now, now)!.id;
    },
    /** Replaces a document's fields; its old chunks (and, by trigger, their FTS rows and vectors) go. */
    replaceDocument(id: number, d: DocumentFields, now: string): void {
      deleteChunks.run(id);
      updateDoc.run(d.name, d.type, d.url, d.content_hash, d.chunk_count, d.bytes, now, id);
    },
    insertChunk(documentId: number, chatbotId: number, ordinal: number, heading: string, content: string): number {
      return Number(insertChunk.run(documentId, chatbotId, ordinal, heading, content).lastInsertRowid);
    },
    list: (chatbotId: number) => list.all(chatbotId),
    deleteDocument: (id: number, chatbotId: number) => deleteDoc.run(id, chatbotId).changes > 0,
    hasChunks: (chatbotId: number) => hasChunks.get(chatbotId) !== undefined,
    chunks: (ids: number[]) => (ids.length === 0 ? [] : chunksByIds.all(JSON.stringify(ids))),
    chunksOfBot: (chatbotId: number) => chunksOfBot.iterate(chatbotId),
    botsWithChunks: () => botsWithChunks.all().map((r) => r.chatbot_id),
  };
}

export type DocumentStore = ReturnType<typeof createDocumentStore>;
