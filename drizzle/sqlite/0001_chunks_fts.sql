-- Full-text index over knowledge chunks (BM25), kept in sync by triggers.
-- External-content table: the text lives once, in chunks.
CREATE VIRTUAL TABLE `chunks_fts` USING fts5(content, heading, content='chunks', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2');
--> statement-breakpoint
CREATE TRIGGER `chunks_fts_ai` AFTER INSERT ON `chunks` BEGIN
  INSERT INTO chunks_fts(rowid, content, heading) VALUES (new.id, new.content, new.heading);
END;
--> statement-breakpoint
CREATE TRIGGER `chunks_fts_ad` AFTER DELETE ON `chunks` BEGIN
  INSERT INTO chunks_fts(chunks_fts, rowid, content, heading) VALUES ('delete', old.id, old.content, old.heading);
END;
--> statement-breakpoint
CREATE TRIGGER `chunks_fts_au` AFTER UPDATE ON `chunks` BEGIN
  INSERT INTO chunks_fts(chunks_fts, rowid, content, heading) VALUES ('delete', old.id, old.content, old.heading);
  INSERT INTO chunks_fts(rowid, content, heading) VALUES (new.id, new.content, new.heading);
END;
