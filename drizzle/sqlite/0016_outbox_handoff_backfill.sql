-- handoff_requested deliveries written before the outbox named their conversation (the payload is the conversation: its id).
UPDATE `webhook_deliveries` SET `conversation_id` = json_extract(`payload`, '$.data.id')
 WHERE `conversation_id` IS NULL AND `event` = 'handoff_requested' AND json_valid(`payload`);
