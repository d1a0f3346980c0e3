-- Instances cache API keys and each chatbot's vector index in memory and poll
-- `revisions` to drop them. Triggers bump the counters so that every way a row
-- changes counts, cascades from a deleted user, organisation or chatbot included.
-- Added vectors need no trigger: they show as a higher max(chunk_id), and
-- knowledge writes take a per-chatbot lock before inserting chunks, so a chatbot's
-- chunk ids become visible in increasing order.
CREATE FUNCTION "chatsvc_vectors_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "revisions" ("scope", "revision")
    SELECT 'vectors:' || "chatbot_id", 1 FROM (SELECT DISTINCT "chatbot_id" FROM "old_rows" ORDER BY 1) AS changed
    ON CONFLICT ("scope") DO UPDATE SET "revision" = "revisions"."revision" + 1;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "chunk_embeddings_removed" AFTER DELETE ON "chunk_embeddings"
  REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "chatsvc_vectors_changed"();
--> statement-breakpoint
CREATE TRIGGER "chunk_embeddings_replaced" AFTER UPDATE ON "chunk_embeddings"
  REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "chatsvc_vectors_changed"();
--> statement-breakpoint
CREATE FUNCTION "chatsvc_api_keys_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "revisions" ("scope", "revision") VALUES ('keys', 1)
    ON CONFLICT ("scope") DO UPDATE SET "revision" = "revisions"."revision" + 1;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "api_keys_changed" AFTER UPDATE OF "status", "key_hash", "expires_at" OR DELETE ON "api_keys"
  FOR EACH STATEMENT EXECUTE FUNCTION "chatsvc_api_keys_changed"();
