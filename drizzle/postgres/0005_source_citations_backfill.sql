-- Citations of the replies stored before source_citations existed: one per reply and document name.
INSERT INTO "source_citations" ("chatbot_id", "name", "cited", "last_cited_at")
SELECT c."chatbot_id", e->>'name', count(DISTINCT m."id"), max(m."created_at")
  FROM "messages" m
  JOIN "conversations" c ON c."id" = m."conversation_id"
  CROSS JOIN LATERAL jsonb_array_elements(m."sources"::jsonb) e
 WHERE m."role" = 'assistant' AND m."sources" <> '[]' AND e->>'name' IS NOT NULL
 GROUP BY 1, 2;
