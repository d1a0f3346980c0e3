import { createHash } from "node:crypto";
import type { ResolvedConfig } from "../config.js";
import type { Chatbots } from "../core/chatbots.js";
import { nowIso } from "../core/clock.js";
import type { Db } from "../core/db/open.js";
import { ChatsvcError } from "../core/errors.js";
import type { IngestInput, Knowledge, KnowledgeDocument, RetrievedChunk, SearchOptions } from "./types.js";

/*
 * Minimal knowledge base: direct text inputs, paragraph chunks and FTS5 BM25 search.
 * The knowledge issue replaces this with loaders, heading-aware chunking, embedders and hybrid search.
 */
export function createKnowledge(db: Db, config: ResolvedConfig, chatbots: Chatbots): Knowledge {
  const sqlite = db.$client;
  const hasChunks = sqlite.prepare<[number], { x: number }>("SELECT 1 AS x FROM chunks WHERE chatbot_id = ? LIMIT 1");
  const fts = sqlite.prepare<[string, number, number], { id: number; document_id: number; content: string; heading: string; name: string; type: string; url: string | null; rank: number }>(
    `SELECT c.id, c.document_id, c.content, c.heading, d.name, d.type, d.url, bm25(chunks_fts) AS rank
       FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid JOIN documents d ON d.id = c.document_id
      WHERE chunks_fts MATCH ? AND c.chatbot_id = ? ORDER BY rank LIMIT ?`,
  );

  const searchChatbot = async (chatbotId: number, query: string, { k = config.retrieval.k, includeBelowThreshold = false }: SearchOptions = {}): Promise<RetrievedChunk[]> => {
    const words = query.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? [];
    if (words.length === 0) return [];
    const match = [...new Set(words)].map((w) => `"${w}"`).join(" OR ");
    return fts
      .all(match, chatbotId, k)
      .map((r) => ({ chunk_id: r.id, document_id: r.document_id, content: r.content, heading: r.heading, name: r.name, type: r.type, url: r.url, score: Math.min(1, -r.rank / 10) }))
      .filter((c) => includeBelowThreshold || c.score >= config.retrieval.threshold);
  };

  return {
    async ingest(slug, inputs: IngestInput[]) {
      const started = Date.now();
      const bot = chatbots.get(slug);
      let added = 0;
      let chunkCount = 0;
      for (const input of inputs) {
        if (typeof input === "string") throw new ChatsvcError(422, "Only text inputs are supported by the minimal knowledge base");
        const paragraphs = input.content.split(/\n{2,}/).map((p) => p.trim()).filter(Boolean);
        const now = nowIso();
        db.$client.transaction(() => {
          const doc = sqlite
            .prepare("INSERT INTO documents (chatbot_id, name, type, source, url, content_hash, chunk_count, bytes, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id")
            .get(bot.id, input.name, input.url ? "url" : "file", input.url ?? input.name, input.url ?? null, createHash("sha256").update(input.content).digest("hex"), paragraphs.length, Buffer.byteLength(input.content), now, now) as { id: number };
          const insert = sqlite.prepare("INSERT INTO chunks (document_id, chatbot_id, ordinal, heading, content) VALUES (?, ?, ?, '', ?)");
          paragraphs.forEach((p, i) => insert.run(doc.id, bot.id, i, p));
        })();
        added++;
        chunkCount += paragraphs.length;
      }
      return { added, updated: 0, skipped: 0, failed: [], chunks: chunkCount, ms: Date.now() - started };
    },
    search: async (slug, query, options) => searchChatbot(chatbots.get(slug).id, query, options),
    searchChatbot,
    list(slug): KnowledgeDocument[] {
      return sqlite.prepare("SELECT id, name, type, source, url, chunk_count, bytes, created_at, updated_at FROM documents WHERE chatbot_id = ? ORDER BY id").all(chatbots.get(slug).id) as KnowledgeDocument[];
    },
    remove(slug, documentId) {
      const result = sqlite.prepare("DELETE FROM documents WHERE id = ? AND chatbot_id = ?").run(documentId, chatbots.get(slug).id);
      if (result.changes === 0) throw ChatsvcError.notFound(`Document ${documentId} not found`);
    },
    async reindex() {
      return { chunks: 0, ms: 0 };
    },
    hasKnowledge: (chatbotId) => hasChunks.get(chatbotId) !== undefined,
    close() {},
  };
}
