-- Full text over knowledge chunks: a generated tsvector (headings weigh more than
-- body text, as in SQLite's bm25 weights) with a GIN index. Queries build their
-- tsquery with websearch_to_tsquery, which accepts any text without raising.
ALTER TABLE "chunks" ADD COLUMN "search" tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('english'::regconfig, "heading"), 'A') || setweight(to_tsvector('english'::regconfig, "content"), 'B')
) STORED;
--> statement-breakpoint
CREATE INDEX "chunks_search_idx" ON "chunks" USING gin ("search");
