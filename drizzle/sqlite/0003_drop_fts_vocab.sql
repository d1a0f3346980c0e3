-- Created by 0002 for term selection, which counts document frequencies with FTS5 MATCH instead; nothing reads it.
DROP TABLE IF EXISTS `chunks_fts_vocab`;
