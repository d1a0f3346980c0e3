-- unanswered_questions is derived data: these triggers keep one row per visible bot reply that could not answer
-- or was rated bad, with the visitor message before it, inside the transaction of every write (turns, ratings,
-- regenerations, erasure, retention, deleting a chatbot, db copy). Deleting a reply deletes its row (foreign key
-- cascade). question_key stays null here: the grouping key needs the stemmer, so the storage layer computes it
-- (keyQuestions) in the same transaction as the service's writes, and before a report for rows added by SQL
-- (this backfill, db copy).
INSERT INTO "unanswered_questions" ("reply_id", "chatbot_id", "conversation_id", "asked_at", "cannot_answer", "bad_rating", "question")
SELECT a."id", c."chatbot_id", a."conversation_id", a."created_at", a."cannot_answer", a."rating" IS NOT DISTINCT FROM 'bad', u."content"
  FROM "messages" a
  JOIN "conversations" c ON c."id" = a."conversation_id"
  JOIN "messages" u ON u."id" = (SELECT max(x."id") FROM "messages" x WHERE x."conversation_id" = a."conversation_id" AND x."role" = 'user' AND x."id" < a."id")
 WHERE a."role" = 'assistant' AND NOT a."regenerated" AND (a."cannot_answer" OR a."rating" = 'bad');
--> statement-breakpoint
-- A reply that stops qualifying (rated good or cleared, regenerated away) loses its row; one that still does keeps
-- its row and key with the new flags and time; one that starts qualifying (rated bad) gets a row.
CREATE FUNCTION "chatsvc_unanswered_replies"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  qualifies boolean := NEW."role" = 'assistant' AND NOT NEW."regenerated" AND (NEW."cannot_answer" OR NEW."rating" IS NOT DISTINCT FROM 'bad');
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF NOT qualifies OR OLD."conversation_id" IS DISTINCT FROM NEW."conversation_id" THEN
      DELETE FROM "unanswered_questions" WHERE "reply_id" = OLD."id";
    ELSE
      UPDATE "unanswered_questions" SET "asked_at" = NEW."created_at", "cannot_answer" = NEW."cannot_answer", "bad_rating" = NEW."rating" IS NOT DISTINCT FROM 'bad'
       WHERE "reply_id" = NEW."id";
    END IF;
  END IF;
  IF qualifies THEN
    INSERT INTO "unanswered_questions" ("reply_id", "chatbot_id", "conversation_id", "asked_at", "cannot_answer", "bad_rating", "question")
    SELECT NEW."id", c."chatbot_id", NEW."conversation_id", NEW."created_at", NEW."cannot_answer", NEW."rating" IS NOT DISTINCT FROM 'bad', u."content"
      FROM "conversations" c,
           LATERAL (SELECT x."content" FROM "messages" x WHERE x."conversation_id" = NEW."conversation_id" AND x."role" = 'user' AND x."id" < NEW."id"
                     ORDER BY x."id" DESC LIMIT 1) u
     WHERE c."id" = NEW."conversation_id"
    ON CONFLICT ("reply_id") DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "unanswered_reply_added" AFTER INSERT ON "messages"
  FOR EACH ROW WHEN (NEW."role" = 'assistant' AND NOT NEW."regenerated" AND (NEW."cannot_answer" OR NEW."rating" IS NOT DISTINCT FROM 'bad'))
  EXECUTE FUNCTION "chatsvc_unanswered_replies"();
--> statement-breakpoint
CREATE TRIGGER "unanswered_reply_changed" AFTER UPDATE OF "role", "rating", "regenerated", "cannot_answer", "created_at", "conversation_id" ON "messages"
  FOR EACH ROW EXECUTE FUNCTION "chatsvc_unanswered_replies"();
