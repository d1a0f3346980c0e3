-- Outbox rows written before deliveries named their conversation: read it from the payload, so erasing a visitor finds them too.
UPDATE "webhook_deliveries" d
   SET "conversation_id" = (CASE WHEN d."event" LIKE 'conversation\_%' THEN p.data->>'id' ELSE p.data->>'conversation_id' END)::int
  FROM (SELECT "id", "payload"::jsonb->'data' AS data FROM "webhook_deliveries" WHERE "conversation_id" IS NULL) p
 WHERE d."id" = p."id"
   AND jsonb_typeof(CASE WHEN d."event" LIKE 'conversation\_%' THEN p.data->'id' ELSE p.data->'conversation_id' END) = 'number';
