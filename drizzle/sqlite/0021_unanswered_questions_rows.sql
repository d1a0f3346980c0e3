-- unanswered_questions is derived data: these triggers keep one row per visible bot reply that could not answer
-- or was rated bad, with the visitor message before it, inside the transaction of every write (turns, ratings,
-- regenerations, erasure, retention, deleting a chatbot, db copy). Deleting a reply deletes its row (foreign key
-- cascade). question_key stays null here: the grouping key needs the stemmer, so the storage layer computes it
-- (keyQuestions) in the same transaction as the service's writes, and before a report for rows added by SQL
-- (this backfill, db copy).
INSERT INTO `unanswered_questions` (`reply_id`, `chatbot_id`, `conversation_id`, `asked_at`, `cannot_answer`, `bad_rating`, `question`)
SELECT a.`id`, c.`chatbot_id`, a.`conversation_id`, a.`created_at`, a.`cannot_answer`, a.`rating` IS 'bad', u.`content`
  FROM `messages` a
  JOIN `conversations` c ON c.`id` = a.`conversation_id`
  JOIN `messages` u ON u.`id` = (SELECT max(x.`id`) FROM `messages` x WHERE x.`conversation_id` = a.`conversation_id` AND x.`role` = 'user' AND x.`id` < a.`id`)
 WHERE a.`role` = 'assistant' AND a.`regenerated` = 0 AND (a.`cannot_answer` = 1 OR a.`rating` IS 'bad');
--> statement-breakpoint
CREATE TRIGGER `unanswered_reply_added` AFTER INSERT ON `messages`
  WHEN NEW.`role` = 'assistant' AND NEW.`regenerated` = 0 AND (NEW.`cannot_answer` = 1 OR NEW.`rating` IS 'bad') BEGIN
  INSERT INTO `unanswered_questions` (`reply_id`, `chatbot_id`, `conversation_id`, `asked_at`, `cannot_answer`, `bad_rating`, `question`)
  SELECT NEW.`id`, c.`chatbot_id`, NEW.`conversation_id`, NEW.`created_at`, NEW.`cannot_answer`, NEW.`rating` IS 'bad', u.`content`
    FROM `conversations` c
    JOIN `messages` u ON u.`id` = (SELECT max(x.`id`) FROM `messages` x WHERE x.`conversation_id` = NEW.`conversation_id` AND x.`role` = 'user' AND x.`id` < NEW.`id`)
   WHERE c.`id` = NEW.`conversation_id`;
END;
--> statement-breakpoint
-- A reply that stops qualifying (rated good or cleared, regenerated away) loses its row; one that still does keeps
-- its row and key with the new flags and time; one that starts qualifying (rated bad) gets a row.
CREATE TRIGGER `unanswered_reply_changed` AFTER UPDATE OF `role`, `rating`, `regenerated`, `cannot_answer`, `created_at`, `conversation_id` ON `messages` BEGIN
  DELETE FROM `unanswered_questions` WHERE `reply_id` = OLD.`id`
     AND (OLD.`conversation_id` IS NOT NEW.`conversation_id`
          OR NOT (NEW.`role` = 'assistant' AND NEW.`regenerated` = 0 AND (NEW.`cannot_answer` = 1 OR NEW.`rating` IS 'bad')));
  UPDATE `unanswered_questions` SET `asked_at` = NEW.`created_at`, `cannot_answer` = NEW.`cannot_answer`, `bad_rating` = NEW.`rating` IS 'bad'
   WHERE `reply_id` = NEW.`id`;
  INSERT INTO `unanswered_questions` (`reply_id`, `chatbot_id`, `conversation_id`, `asked_at`, `cannot_answer`, `bad_rating`, `question`)
  SELECT NEW.`id`, c.`chatbot_id`, NEW.`conversation_id`, NEW.`created_at`, NEW.`cannot_answer`, NEW.`rating` IS 'bad', u.`content`
    FROM `conversations` c
    JOIN `messages` u ON u.`id` = (SELECT max(x.`id`) FROM `messages` x WHERE x.`conversation_id` = NEW.`conversation_id` AND x.`role` = 'user' AND x.`id` < NEW.`id`)
   WHERE c.`id` = NEW.`conversation_id`
     AND NEW.`role` = 'assistant' AND NEW.`regenerated` = 0 AND (NEW.`cannot_answer` = 1 OR NEW.`rating` IS 'bad')
  ON CONFLICT (`reply_id`) DO NOTHING;
END;
