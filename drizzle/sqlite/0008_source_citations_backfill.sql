-- Citations of the replies stored before source_citations existed: one per reply and document name.
INSERT INTO `source_citations` (`chatbot_id`, `name`, `cited`, `last_cited_at`)
SELECT c.`chatbot_id`, json_extract(j.value, '$.name'), count(DISTINCT m.`id`), max(m.`created_at`)
  FROM `messages` m
  JOIN `conversations` c ON c.`id` = m.`conversation_id`,
  json_each(CASE WHEN json_valid(m.`sources`) THEN m.`sources` ELSE '[]' END) j
 WHERE m.`role` = 'assistant' AND m.`sources` <> '[]' AND json_extract(j.value, '$.name') IS NOT NULL
 GROUP BY 1, 2;
