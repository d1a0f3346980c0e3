-- chunks_fts no longer merges its segments inside the write that fills it (FTS5's automerge does a
-- fixed number of pages per index level at commit, a step that grows with the index): the knowledge
-- store merges in small steps of their own after each write (src/storage/sqlite/fts-merge.ts).
INSERT INTO `chunks_fts`(`chunks_fts`, `rank`) VALUES ('automerge', 0);
