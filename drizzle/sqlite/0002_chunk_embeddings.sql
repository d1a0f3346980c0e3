-- Chunk vectors as plain float32 blobs by chunk id. Nearest-neighbour search
-- runs on an in-memory int8 copy per chatbot (src/knowledge/quantized-vectors.ts),
-- re-scored against these rows; vec0's brute-force float scan was the cost of
-- every query. Databases with the old vec0 `chunk_vectors` table are copied
-- over on open (the vec0 table only exists when an embedder was used, so SQL
-- alone cannot do it).
CREATE TABLE `chunk_embeddings` (
  `chunk_id` integer PRIMARY KEY NOT NULL REFERENCES `chunks`(`id`) ON DELETE CASCADE,
  `chatbot_id` integer NOT NULL,
  `embedding` blob NOT NULL
);
--> statement-breakpoint
CREATE INDEX `chunk_embeddings_chatbot_idx` ON `chunk_embeddings` (`chatbot_id`);
--> statement-breakpoint
-- Counts removed or replaced vectors per chatbot, so an in-memory copy (in
-- this or another process) knows to reload; added vectors show as a higher max(chunk_id).
CREATE TABLE `chunk_embedding_revisions` (
  `chatbot_id` integer PRIMARY KEY NOT NULL,
  `revision` integer NOT NULL
);
--> statement-breakpoint
CREATE TRIGGER `chunk_embeddings_ad` AFTER DELETE ON `chunk_embeddings` BEGIN
  INSERT INTO chunk_embedding_revisions (chatbot_id, revision) VALUES (old.chatbot_id, 1)
    ON CONFLICT (chatbot_id) DO UPDATE SET revision = revision + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `chunk_embeddings_au` AFTER UPDATE ON `chunk_embeddings` BEGIN
  INSERT INTO chunk_embedding_revisions (chatbot_id, revision) VALUES (old.chatbot_id, 1)
    ON CONFLICT (chatbot_id) DO UPDATE SET revision = revision + 1;
END;
--> statement-breakpoint
-- Per-term document counts, to leave very frequent words out of full-text queries.
CREATE VIRTUAL TABLE `chunks_fts_vocab` USING fts5vocab(`chunks_fts`, 'row');
