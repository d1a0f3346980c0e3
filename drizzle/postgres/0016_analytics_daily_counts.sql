-- analytics_daily is derived data: these triggers keep it equal to what GET /analytics would count from the rows,
-- inside the transaction of every write (turns, ratings, regenerations, leads, handoffs, erasure, retention, db copy).
-- A message counts on its created_at day for its conversation's chatbot.
INSERT INTO "analytics_daily" ("chatbot_id", "day", "conversations", "visitor_messages", "answered", "cannot_answer", "good_ratings", "bad_ratings", "leads", "handoffs")
SELECT "chatbot_id", "day", sum("conversations"), sum("visitor_messages"), sum("answered"), sum("cannot_answer"), sum("good_ratings"), sum("bad_ratings"), sum("leads"), sum("handoffs")
  FROM (
    SELECT "chatbot_id", substr("started_at", 1, 10) AS "day", count(*) AS "conversations", 0 AS "visitor_messages", 0 AS "answered", 0 AS "cannot_answer", 0 AS "good_ratings", 0 AS "bad_ratings", 0 AS "leads", 0 AS "handoffs"
      FROM "conversations" GROUP BY 1, 2
    UNION ALL
    SELECT "chatbot_id", substr("handed_off_at", 1, 10), 0, 0, 0, 0, 0, 0, 0, count(*)
      FROM "conversations" WHERE "handed_off_at" IS NOT NULL GROUP BY 1, 2
    UNION ALL
    SELECT c."chatbot_id", substr(m."created_at", 1, 10), 0,
           count(*) FILTER (WHERE m."role" = 'user'),
           count(*) FILTER (WHERE m."role" = 'assistant' AND NOT m."regenerated" AND NOT m."cannot_answer" AND m."model" IS NOT NULL),
           count(*) FILTER (WHERE m."role" = 'assistant' AND NOT m."regenerated" AND m."cannot_answer"),
           count(*) FILTER (WHERE NOT m."regenerated" AND m."rating" = 'good'),
           count(*) FILTER (WHERE NOT m."regenerated" AND m."rating" = 'bad'),
           0, 0
      FROM "messages" m JOIN "conversations" c ON c."id" = m."conversation_id" GROUP BY 1, 2
    UNION ALL
    SELECT "chatbot_id", substr("created_at", 1, 10), 0, 0, 0, 0, 0, 0, count(*), 0
      FROM "leads" GROUP BY 1, 2
  ) parts
 GROUP BY 1, 2;
--> statement-breakpoint
-- Adds one set of counts to a chatbot's day (sign 1) or takes it back (sign -1). Taking back only updates an
-- existing row of a chatbot that still exists: while a chatbot is deleted its rows go too (or fail the foreign
-- key check once updated in the deleting transaction), and must not come back.
CREATE FUNCTION "chatsvc_analytics_count"(bot integer, d text, sign integer, conv integer, vis integer, ans integer, cna integer, good integer, bad integer, lead integer, hand integer)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF bot IS NULL OR d IS NULL OR (conv + vis + ans + cna + good + bad + lead + hand) = 0 THEN
    RETURN;
  END IF;
  IF sign < 0 THEN
    UPDATE "analytics_daily" SET "conversations" = "conversations" - conv, "visitor_messages" = "visitor_messages" - vis,
        "answered" = "answered" - ans, "cannot_answer" = "cannot_answer" - cna, "good_ratings" = "good_ratings" - good,
        "bad_ratings" = "bad_ratings" - bad, "leads" = "leads" - lead, "handoffs" = "handoffs" - hand
      WHERE "chatbot_id" = bot AND "day" = d AND EXISTS (SELECT 1 FROM "chatbots" WHERE "id" = bot);
  ELSE
    INSERT INTO "analytics_daily" AS a ("chatbot_id", "day", "conversations", "visitor_messages", "answered", "cannot_answer", "good_ratings", "bad_ratings", "leads", "handoffs")
      VALUES (bot, d, conv, vis, ans, cna, good, bad, lead, hand)
      ON CONFLICT ("chatbot_id", "day") DO UPDATE SET "conversations" = a."conversations" + conv, "visitor_messages" = a."visitor_messages" + vis,
        "answered" = a."answered" + ans, "cannot_answer" = a."cannot_answer" + cna, "good_ratings" = a."good_ratings" + good,
        "bad_ratings" = a."bad_ratings" + bad, "leads" = a."leads" + lead, "handoffs" = a."handoffs" + hand;
  END IF;
END $$;
--> statement-breakpoint
CREATE FUNCTION "chatsvc_analytics_message_count"(m "messages", sign integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "chatsvc_analytics_count"((SELECT "chatbot_id" FROM "conversations" WHERE "id" = m."conversation_id"), substr(m."created_at", 1, 10), sign, 0,
    (m."role" = 'user')::int,
    (m."role" = 'assistant' AND NOT m."regenerated" AND NOT m."cannot_answer" AND m."model" IS NOT NULL)::int,
    (m."role" = 'assistant' AND NOT m."regenerated" AND m."cannot_answer")::int,
    (NOT m."regenerated" AND m."rating" IS NOT DISTINCT FROM 'good')::int,
    (NOT m."regenerated" AND m."rating" IS NOT DISTINCT FROM 'bad')::int,
    0, 0);
END $$;
--> statement-breakpoint
CREATE FUNCTION "chatsvc_analytics_messages"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN PERFORM "chatsvc_analytics_message_count"(OLD, -1); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM "chatsvc_analytics_message_count"(NEW, 1); END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "analytics_messages" AFTER INSERT OR DELETE OR UPDATE OF "role", "model", "rating", "regenerated", "cannot_answer", "created_at", "conversation_id" ON "messages"
  FOR EACH ROW EXECUTE FUNCTION "chatsvc_analytics_messages"();
--> statement-breakpoint
CREATE FUNCTION "chatsvc_analytics_conversations"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    IF TG_OP = 'DELETE' THEN
      -- The messages go first, while their conversation still names the chatbot their counts belong to
      -- (the cascade would delete them after the conversation row, when that lookup finds nothing).
      DELETE FROM "messages" WHERE "conversation_id" = OLD."id";
    END IF;
    PERFORM "chatsvc_analytics_count"(OLD."chatbot_id", substr(OLD."started_at", 1, 10), -1, 1, 0, 0, 0, 0, 0, 0, 0);
    PERFORM "chatsvc_analytics_count"(OLD."chatbot_id", substr(OLD."handed_off_at", 1, 10), -1, 0, 0, 0, 0, 0, 0, 0, 1);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM "chatsvc_analytics_count"(NEW."chatbot_id", substr(NEW."started_at", 1, 10), 1, 1, 0, 0, 0, 0, 0, 0, 0);
    PERFORM "chatsvc_analytics_count"(NEW."chatbot_id", substr(NEW."handed_off_at", 1, 10), 1, 0, 0, 0, 0, 0, 0, 0, 1);
    RETURN NULL;
  END IF;
  RETURN OLD;
END $$;
--> statement-breakpoint
CREATE TRIGGER "analytics_conversations_added" AFTER INSERT ON "conversations"
  FOR EACH ROW EXECUTE FUNCTION "chatsvc_analytics_conversations"();
--> statement-breakpoint
CREATE TRIGGER "analytics_conversations_changed" AFTER UPDATE OF "started_at", "handed_off_at" ON "conversations"
  FOR EACH ROW WHEN (OLD."started_at" IS DISTINCT FROM NEW."started_at" OR OLD."handed_off_at" IS DISTINCT FROM NEW."handed_off_at")
  EXECUTE FUNCTION "chatsvc_analytics_conversations"();
--> statement-breakpoint
CREATE TRIGGER "analytics_conversations_removed" BEFORE DELETE ON "conversations"
  FOR EACH ROW EXECUTE FUNCTION "chatsvc_analytics_conversations"();
--> statement-breakpoint
CREATE FUNCTION "chatsvc_analytics_leads"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN PERFORM "chatsvc_analytics_count"(OLD."chatbot_id", substr(OLD."created_at", 1, 10), -1, 0, 0, 0, 0, 0, 0, 1, 0); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM "chatsvc_analytics_count"(NEW."chatbot_id", substr(NEW."created_at", 1, 10), 1, 0, 0, 0, 0, 0, 0, 1, 0); END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "analytics_leads" AFTER INSERT OR DELETE OR UPDATE OF "chatbot_id", "created_at" ON "leads"
  FOR EACH ROW EXECUTE FUNCTION "chatsvc_analytics_leads"();
