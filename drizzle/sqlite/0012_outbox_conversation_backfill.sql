-- Outbox rows written before deliveries named their conversation: read it from the payload, so erasing a visitor finds them too.
UPDATE `webhook_deliveries`
   SET `conversation_id` = CASE
     WHEN `event` LIKE 'conversation\_%' ESCAPE '\' THEN json_extract(`payload`, '$.data.id')
     ELSE json_extract(`payload`, '$.data.conversation_id')
   END
 WHERE `conversation_id` IS NULL AND json_valid(`payload`);
