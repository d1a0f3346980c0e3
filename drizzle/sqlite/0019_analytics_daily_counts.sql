-- analytics_daily is derived data: these triggers keep it equal to what GET /analytics would count from the rows,
-- inside the transaction of every write (turns, ratings, regenerations, leads, handoffs, erasure, retention, db copy).
-- A message counts on its created_at day for its conversation's chatbot; taking a count back only updates an
-- existing row (while a chatbot is deleted its rows may already be gone), adding one creates the row.
INSERT INTO `analytics_daily` (`chatbot_id`, `day`, `conversations`, `visitor_messages`, `answered`, `cannot_answer`, `good_ratings`, `bad_ratings`, `leads`, `handoffs`)
SELECT `chatbot_id`, `day`, sum(`conversations`), sum(`visitor_messages`), sum(`answered`), sum(`cannot_answer`), sum(`good_ratings`), sum(`bad_ratings`), sum(`leads`), sum(`handoffs`)
  FROM (
    SELECT `chatbot_id`, substr(`started_at`, 1, 10) AS `day`, count(*) AS `conversations`, 0 AS `visitor_messages`, 0 AS `answered`, 0 AS `cannot_answer`, 0 AS `good_ratings`, 0 AS `bad_ratings`, 0 AS `leads`, 0 AS `handoffs`
      FROM `conversations` GROUP BY 1, 2
    UNION ALL
    SELECT `chatbot_id`, substr(`handed_off_at`, 1, 10), 0, 0, 0, 0, 0, 0, 0, count(*)
      FROM `conversations` WHERE `handed_off_at` IS NOT NULL GROUP BY 1, 2
    UNION ALL
    SELECT c.`chatbot_id`, substr(m.`created_at`, 1, 10), 0,
           sum(m.`role` = 'user'),
           sum(m.`role` = 'assistant' AND m.`regenerated` = 0 AND m.`cannot_answer` = 0 AND m.`model` IS NOT NULL),
           sum(m.`role` = 'assistant' AND m.`regenerated` = 0 AND m.`cannot_answer` = 1),
           sum(m.`regenerated` = 0 AND m.`rating` IS 'good'),
           sum(m.`regenerated` = 0 AND m.`rating` IS 'bad'),
           0, 0
      FROM `messages` m JOIN `conversations` c ON c.`id` = m.`conversation_id` GROUP BY 1, 2
    UNION ALL
    SELECT `chatbot_id`, substr(`created_at`, 1, 10), 0, 0, 0, 0, 0, 0, count(*), 0
      FROM `leads` GROUP BY 1, 2
  )
 GROUP BY 1, 2;
--> statement-breakpoint
CREATE TRIGGER `analytics_conversation_added` AFTER INSERT ON `conversations` BEGIN
  INSERT INTO `analytics_daily` (`chatbot_id`, `day`, `conversations`) VALUES (NEW.`chatbot_id`, substr(NEW.`started_at`, 1, 10), 1)
    ON CONFLICT (`chatbot_id`, `day`) DO UPDATE SET `conversations` = `conversations` + 1;
  INSERT INTO `analytics_daily` (`chatbot_id`, `day`, `handoffs`) SELECT NEW.`chatbot_id`, substr(NEW.`handed_off_at`, 1, 10), 1 WHERE NEW.`handed_off_at` IS NOT NULL
    ON CONFLICT (`chatbot_id`, `day`) DO UPDATE SET `handoffs` = `handoffs` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `analytics_conversation_changed` AFTER UPDATE OF `started_at`, `handed_off_at` ON `conversations`
  WHEN OLD.`started_at` IS NOT NEW.`started_at` OR OLD.`handed_off_at` IS NOT NEW.`handed_off_at` BEGIN
  UPDATE `analytics_daily` SET `conversations` = `conversations` - 1 WHERE `chatbot_id` = OLD.`chatbot_id` AND `day` = substr(OLD.`started_at`, 1, 10);
  UPDATE `analytics_daily` SET `handoffs` = `handoffs` - 1 WHERE OLD.`handed_off_at` IS NOT NULL AND `chatbot_id` = OLD.`chatbot_id` AND `day` = substr(OLD.`handed_off_at`, 1, 10);
  INSERT INTO `analytics_daily` (`chatbot_id`, `day`, `conversations`) VALUES (NEW.`chatbot_id`, substr(NEW.`started_at`, 1, 10), 1)
    ON CONFLICT (`chatbot_id`, `day`) DO UPDATE SET `conversations` = `conversations` + 1;
  INSERT INTO `analytics_daily` (`chatbot_id`, `day`, `handoffs`) SELECT NEW.`chatbot_id`, substr(NEW.`handed_off_at`, 1, 10), 1 WHERE NEW.`handed_off_at` IS NOT NULL
    ON CONFLICT (`chatbot_id`, `day`) DO UPDATE SET `handoffs` = `handoffs` + 1;
END;
--> statement-breakpoint
-- The messages go first, while their conversation still names the chatbot their counts belong to
-- (a cascade would delete them after the conversation row, when that lookup finds nothing).
CREATE TRIGGER `analytics_conversation_removed` BEFORE DELETE ON `conversations` BEGIN
  DELETE FROM `messages` WHERE `conversation_id` = OLD.`id`;
  UPDATE `analytics_daily` SET `conversations` = `conversations` - 1 WHERE `chatbot_id` = OLD.`chatbot_id` AND `day` = substr(OLD.`started_at`, 1, 10);
  UPDATE `analytics_daily` SET `handoffs` = `handoffs` - 1 WHERE OLD.`handed_off_at` IS NOT NULL AND `chatbot_id` = OLD.`chatbot_id` AND `day` = substr(OLD.`handed_off_at`, 1, 10);
END;
--> statement-breakpoint
CREATE TRIGGER `analytics_message_added` AFTER INSERT ON `messages` WHEN NEW.`role` <> 'agent' BEGIN
  INSERT INTO `analytics_daily` (`chatbot_id`, `day`, `visitor_messages`, `answered`, `cannot_answer`, `good_ratings`, `bad_ratings`)
  SELECT c.`chatbot_id`, substr(NEW.`created_at`, 1, 10),
         NEW.`role` = 'user',
         NEW.`role` = 'assistant' AND NEW.`regenerated` = 0 AND NEW.`cannot_answer` = 0 AND NEW.`model` IS NOT NULL,
         NEW.`role` = 'assistant' AND NEW.`regenerated` = 0 AND NEW.`cannot_answer` = 1,
         NEW.`regenerated` = 0 AND NEW.`rating` IS 'good',
         NEW.`regenerated` = 0 AND NEW.`rating` IS 'bad'
    FROM `conversations` c WHERE c.`id` = NEW.`conversation_id`
    ON CONFLICT (`chatbot_id`, `day`) DO UPDATE SET
      `visitor_messages` = `visitor_messages` + excluded.`visitor_messages`, `answered` = `answered` + excluded.`answered`,
      `cannot_answer` = `cannot_answer` + excluded.`cannot_answer`, `good_ratings` = `good_ratings` + excluded.`good_ratings`,
      `bad_ratings` = `bad_ratings` + excluded.`bad_ratings`;
END;
--> statement-breakpoint
CREATE TRIGGER `analytics_message_changed` AFTER UPDATE OF `role`, `model`, `rating`, `regenerated`, `cannot_answer`, `created_at`, `conversation_id` ON `messages` BEGIN
  UPDATE `analytics_daily` SET
      `visitor_messages` = `visitor_messages` - (OLD.`role` = 'user'),
      `answered` = `answered` - (OLD.`role` = 'assistant' AND OLD.`regenerated` = 0 AND OLD.`cannot_answer` = 0 AND OLD.`model` IS NOT NULL),
      `cannot_answer` = `cannot_answer` - (OLD.`role` = 'assistant' AND OLD.`regenerated` = 0 AND OLD.`cannot_answer` = 1),
      `good_ratings` = `good_ratings` - (OLD.`regenerated` = 0 AND OLD.`rating` IS 'good'),
      `bad_ratings` = `bad_ratings` - (OLD.`regenerated` = 0 AND OLD.`rating` IS 'bad')
    WHERE `chatbot_id` = (SELECT `chatbot_id` FROM `conversations` WHERE `id` = OLD.`conversation_id`) AND `day` = substr(OLD.`created_at`, 1, 10);
  INSERT INTO `analytics_daily` (`chatbot_id`, `day`, `visitor_messages`, `answered`, `cannot_answer`, `good_ratings`, `bad_ratings`)
  SELECT c.`chatbot_id`, substr(NEW.`created_at`, 1, 10),
         NEW.`role` = 'user',
         NEW.`role` = 'assistant' AND NEW.`regenerated` = 0 AND NEW.`cannot_answer` = 0 AND NEW.`model` IS NOT NULL,
         NEW.`role` = 'assistant' AND NEW.`regenerated` = 0 AND NEW.`cannot_answer` = 1,
         NEW.`regenerated` = 0 AND NEW.`rating` IS 'good',
         NEW.`regenerated` = 0 AND NEW.`rating` IS 'bad'
    FROM `conversations` c WHERE c.`id` = NEW.`conversation_id`
    ON CONFLICT (`chatbot_id`, `day`) DO UPDATE SET
      `visitor_messages` = `visitor_messages` + excluded.`visitor_messages`, `answered` = `answered` + excluded.`answered`,
      `cannot_answer` = `cannot_answer` + excluded.`cannot_answer`, `good_ratings` = `good_ratings` + excluded.`good_ratings`,
      `bad_ratings` = `bad_ratings` + excluded.`bad_ratings`;
END;
--> statement-breakpoint
CREATE TRIGGER `analytics_message_removed` AFTER DELETE ON `messages` WHEN OLD.`role` <> 'agent' BEGIN
  UPDATE `analytics_daily` SET
      `visitor_messages` = `visitor_messages` - (OLD.`role` = 'user'),
      `answered` = `answered` - (OLD.`role` = 'assistant' AND OLD.`regenerated` = 0 AND OLD.`cannot_answer` = 0 AND OLD.`model` IS NOT NULL),
      `cannot_answer` = `cannot_answer` - (OLD.`role` = 'assistant' AND OLD.`regenerated` = 0 AND OLD.`cannot_answer` = 1),
      `good_ratings` = `good_ratings` - (OLD.`regenerated` = 0 AND OLD.`rating` IS 'good'),
      `bad_ratings` = `bad_ratings` - (OLD.`regenerated` = 0 AND OLD.`rating` IS 'bad')
    WHERE `chatbot_id` = (SELECT `chatbot_id` FROM `conversations` WHERE `id` = OLD.`conversation_id`) AND `day` = substr(OLD.`created_at`, 1, 10);
END;
--> statement-breakpoint
CREATE TRIGGER `analytics_lead_added` AFTER INSERT ON `leads` BEGIN
  INSERT INTO `analytics_daily` (`chatbot_id`, `day`, `leads`) VALUES (NEW.`chatbot_id`, substr(NEW.`created_at`, 1, 10), 1)
    ON CONFLICT (`chatbot_id`, `day`) DO UPDATE SET `leads` = `leads` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `analytics_lead_changed` AFTER UPDATE OF `chatbot_id`, `created_at` ON `leads`
  WHEN OLD.`chatbot_id` IS NOT NEW.`chatbot_id` OR OLD.`created_at` IS NOT NEW.`created_at` BEGIN
  UPDATE `analytics_daily` SET `leads` = `leads` - 1 WHERE `chatbot_id` = OLD.`chatbot_id` AND `day` = substr(OLD.`created_at`, 1, 10);
  INSERT INTO `analytics_daily` (`chatbot_id`, `day`, `leads`) VALUES (NEW.`chatbot_id`, substr(NEW.`created_at`, 1, 10), 1)
    ON CONFLICT (`chatbot_id`, `day`) DO UPDATE SET `leads` = `leads` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `analytics_lead_removed` AFTER DELETE ON `leads` BEGIN
  UPDATE `analytics_daily` SET `leads` = `leads` - 1 WHERE `chatbot_id` = OLD.`chatbot_id` AND `day` = substr(OLD.`created_at`, 1, 10);
END;
