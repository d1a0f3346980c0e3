-- Instances remember chatbots by slug (every chat request resolves one): every way a chatbot row changes,
-- or goes, moves the `chatbots` counter that they poll, as `keys` does for API keys.
CREATE FUNCTION "chatsvc_chatbots_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "revisions" ("scope", "revision") VALUES ('chatbots', 1)
    ON CONFLICT ("scope") DO UPDATE SET "revision" = "revisions"."revision" + 1;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "chatbots_changed" AFTER UPDATE OR DELETE ON "chatbots"
  FOR EACH STATEMENT EXECUTE FUNCTION "chatsvc_chatbots_changed"();
