-- Counts every write to what a search reads (chunks and their full text, documents, vectors, the
-- embedder record), so a search thread may keep reading one snapshot while only other tables change
-- (src/storage/sqlite/search-reader.ts).
CREATE TABLE `knowledge_version` (
  `id` integer PRIMARY KEY NOT NULL CHECK (`id` = 1),
  `version` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `knowledge_version` (`id`, `version`) VALUES (1, 0);
--> statement-breakpoint
CREATE TRIGGER `knowledge_version_chunks_ai` AFTER INSERT ON `chunks` BEGIN UPDATE knowledge_version SET version = version + 1; END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_version_chunks_au` AFTER UPDATE ON `chunks` BEGIN UPDATE knowledge_version SET version = version + 1; END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_version_chunks_ad` AFTER DELETE ON `chunks` BEGIN UPDATE knowledge_version SET version = version + 1; END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_version_documents_au` AFTER UPDATE OF `name`, `type`, `url` ON `documents` BEGIN UPDATE knowledge_version SET version = version + 1; END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_version_documents_ad` AFTER DELETE ON `documents` BEGIN UPDATE knowledge_version SET version = version + 1; END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_version_embeddings_ai` AFTER INSERT ON `chunk_embeddings` BEGIN UPDATE knowledge_version SET version = version + 1; END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_version_embeddings_au` AFTER UPDATE ON `chunk_embeddings` BEGIN UPDATE knowledge_version SET version = version + 1; END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_version_embeddings_ad` AFTER DELETE ON `chunk_embeddings` BEGIN UPDATE knowledge_version SET version = version + 1; END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_version_settings_ai` AFTER INSERT ON `settings` WHEN new.`key` = 'knowledge.embedder' BEGIN UPDATE knowledge_version SET version = version + 1; END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_version_settings_au` AFTER UPDATE ON `settings` WHEN new.`key` = 'knowledge.embedder' OR old.`key` = 'knowledge.embedder' BEGIN UPDATE knowledge_version SET version = version + 1; END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_version_settings_ad` AFTER DELETE ON `settings` WHEN old.`key` = 'knowledge.embedder' BEGIN UPDATE knowledge_version SET version = version + 1; END;
