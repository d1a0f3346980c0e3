-- handoff_requested deliveries written before the outbox named their conversation (the payload is the conversation: its id).
UPDATE "webhook_deliveries" SET "conversation_id" = ("payload"::jsonb #>> '{data,id}')::int
 WHERE "conversation_id" IS NULL AND "event" = 'handoff_requested' AND jsonb_typeof("payload"::jsonb #> '{data,id}') = 'number';
