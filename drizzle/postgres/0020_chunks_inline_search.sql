-- Chunk rows stay whole in the table unless one outgrows a page. Ranking a full-text search
-- reads the tsvector of every chunk matching any of its words; kept out of line (as the default
-- threshold did for many chunks) each cost a TOAST index lookup and another page.
-- Existing chunks keep their layout until their document is written again (or a VACUUM FULL).
ALTER TABLE "chunks" SET (toast_tuple_target = 8160);
