import Database from "better-sqlite3";
import pg from "pg";

/*
 * The analytics volume of issue 17, written with a few set-based INSERT ... SELECT
 * statements (seconds, where the API would take hours): 100,000 conversations of
 * 10 messages each (1,000,000 messages: five questions, five replies) spread
 * evenly over the 90 days before now, 80% on chatbot `big` and the rest on three
 * others of the same organisation; 8% of replies are the fallback, 5% rated good,
 * 2% rated bad; replies that answered cite one of 200 documents; one lead per 10
 * conversations. Questions come from 60 wordings, so unanswered ones group.
 */
export const VOLUME = { conversations: 100_000, messagesPerConversation: 10, days: 90, documents: 200 };

const QUESTIONS = Array.from({ length: 60 }, (_, i) => `How do I configure feature ${i % 30} ${i < 30 ? "with the CLI" : "using the CLI"}?`);

const SQLITE = (now) => {
  const span = VOLUME.days * 86_400;
  const start = Math.floor(now / 1000) - span;
  const perConversation = span / VOLUME.conversations;
  const iso = (seconds) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${seconds}, 'unixepoch')`;
  const questions = QUESTIONS.map((q) => `'${q}'`).join(",");
  return [
    `INSERT INTO chatbots (organization_id, slug, name, created_at, updated_at)
     SELECT 1, 'bench-' || value, 'Bench ' || value, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z' FROM json_each('["big","b2","b3","b4"]')`,
    `INSERT INTO documents (chatbot_id, name, type, source, content_hash, created_at, updated_at)
     WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${VOLUME.documents})
     SELECT (SELECT id FROM chatbots WHERE slug = 'bench-big'), 'doc-' || i || '.md', 'file', '/docs/doc-' || i || '.md', 'h' || i, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z' FROM n`,
    `INSERT INTO conversations (id, chatbot_id, session_id, metadata, source, started_at, last_message_at, ended_at)
     WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${VOLUME.conversations}),
       bots AS (SELECT min(id) AS first FROM chatbots WHERE slug LIKE 'bench-%')
     SELECT i + 1000, bots.first + CASE WHEN i % 10 < 8 THEN 0 ELSE i % 10 - 7 END, 'bench_' || i, '{}', 'api',
            ${iso(`${start} + i * ${perConversation}`)}, ${iso(`${start} + i * ${perConversation} + 270`)}, ${iso(`${start} + i * ${perConversation} + 300`)}
       FROM n, bots`,
    `INSERT INTO messages (conversation_id, role, content, sources, model, response_ms, cannot_answer, rating, created_at)
     WITH RECURSIVE j(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM j WHERE k < ${VOLUME.messagesPerConversation - 1}),
       q AS (SELECT key AS n, value AS text FROM json_each(json_array(${questions})))
     SELECT c.id, CASE WHEN k % 2 = 0 THEN 'user' ELSE 'assistant' END,
            CASE WHEN k % 2 = 0 THEN (SELECT text FROM q WHERE n = (c.id * 7 + k) % ${QUESTIONS.length}) ELSE '<p>' || substr(hex(randomblob(60)), 1, 120) || '</p>' END,
            CASE WHEN k % 2 = 1 AND (c.id * 5 + k) % 100 >= 8 THEN '[{"name":"doc-' || ((c.id + k) % ${VOLUME.documents} + 1) || '.md","type":"file","score":0.5}]' ELSE '[]' END,
            CASE WHEN k % 2 = 1 THEN 'extractive' END, CASE WHEN k % 2 = 1 THEN 12 END,
            k % 2 = 1 AND (c.id * 5 + k) % 100 < 8,
            CASE WHEN k % 2 = 0 THEN NULL WHEN (c.id * 3 + k) % 100 < 5 THEN 'good' WHEN (c.id * 3 + k) % 100 < 7 THEN 'bad' END,
            strftime('%Y-%m-%dT%H:%M:%fZ', c.started_at, '+' || (k * 30) || ' seconds')
       FROM conversations c, j`,
    `INSERT INTO leads (organization_id, chatbot_id, conversation_id, email, source, created_at, updated_at)
     SELECT 1, chatbot_id, id, 'visitor' || id || '@example.com', 'api', last_message_at, last_message_at FROM conversations WHERE id % 10 = 0`,
  ];
};

/** Seeds the volume into a SQLite database that `chatsvc init` set up (organisation 1). */
export function seedSqlite(file, now = Date.now()) {
  const db = new Database(file);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.transaction(() => {
      for (const sql of SQLITE(now)) db.exec(sql);
      // Citations as storing each reply counts them (the same SQL as the migration that counted old replies).
      db.exec(`INSERT INTO source_citations (chatbot_id, name, cited, last_cited_at)
        SELECT c.chatbot_id, json_extract(j.value, '$.name'), count(DISTINCT m.id), max(m.created_at)
          FROM messages m JOIN conversations c ON c.id = m.conversation_id, json_each(m.sources) j
         WHERE m.role = 'assistant' AND m.sources <> '[]' GROUP BY 1, 2`);
    })();
    return { messages: db.prepare("SELECT count(*) FROM messages").pluck().get(), conversations: db.prepare("SELECT count(*) FROM conversations").pluck().get() };
  } finally {
    db.close();
  }
}

/** Seeds the same volume into a PostgreSQL database that `chatsvc init` set up, then gathers planner statistics. */
export async function seedPostgres(url, now = Date.now()) {
  const span = VOLUME.days * 86_400;
  const start = Math.floor(now / 1000) - span;
  const per = span / VOLUME.conversations;
  const iso = (seconds) => `to_char(to_timestamp(${seconds}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("BEGIN");
    await client.query(`INSERT INTO chatbots (organization_id, slug, name, created_at, updated_at)
      SELECT 1, 'bench-' || s, 'Bench ' || s, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z' FROM unnest(ARRAY['big','b2','b3','b4']) s`);
    await client.query(`INSERT INTO documents (chatbot_id, name, type, source, content_hash, created_at, updated_at)
      SELECT (SELECT id FROM chatbots WHERE slug = 'bench-big'), 'doc-' || i || '.md', 'file', '/docs/doc-' || i || '.md', 'h' || i, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z'
        FROM generate_series(1, ${VOLUME.documents}) i`);
    await client.query(`INSERT INTO conversations (id, chatbot_id, session_id, metadata, source, started_at, last_message_at, ended_at)
      SELECT i + 1000, b.first + CASE WHEN i % 10 < 8 THEN 0 ELSE i % 10 - 7 END, 'bench_' || i, '{}', 'api',
             ${iso(`${start} + i * ${per}`)}, ${iso(`${start} + i * ${per} + 270`)}, ${iso(`${start} + i * ${per} + 300`)}
        FROM generate_series(1, ${VOLUME.conversations}) i, (SELECT min(id) AS first FROM chatbots WHERE slug LIKE 'bench-%') b`);
    await client.query(
      `INSERT INTO messages (conversation_id, role, content, sources, model, response_ms, cannot_answer, rating, created_at)
       SELECT c.id, CASE WHEN k % 2 = 0 THEN 'user' ELSE 'assistant' END,
              CASE WHEN k % 2 = 0 THEN ($1::text[])[(c.id * 7 + k) % ${QUESTIONS.length} + 1] ELSE '<p>' || md5(c.id::text || k) || md5(k::text || c.id) || '</p>' END,
              CASE WHEN k % 2 = 1 AND (c.id * 5 + k) % 100 >= 8 THEN '[{"name":"doc-' || ((c.id + k) % ${VOLUME.documents} + 1) || '.md","type":"file","score":0.5}]' ELSE '[]' END,
              CASE WHEN k % 2 = 1 THEN 'extractive' END, CASE WHEN k % 2 = 1 THEN 12 END,
              k % 2 = 1 AND (c.id * 5 + k) % 100 < 8,
              CASE WHEN k % 2 = 0 THEN NULL WHEN (c.id * 3 + k) % 100 < 5 THEN 'good' WHEN (c.id * 3 + k) % 100 < 7 THEN 'bad' END,
              to_char((c.started_at::timestamptz + make_interval(secs => k * 30)) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
         FROM conversations c, generate_series(0, ${VOLUME.messagesPerConversation - 1}) k`,
      [QUESTIONS],
    );
    await client.query(`INSERT INTO leads (organization_id, chatbot_id, conversation_id, email, source, created_at, updated_at)
      SELECT 1, chatbot_id, id, 'visitor' || id || '@example.com', 'api', last_message_at, last_message_at FROM conversations WHERE id % 10 = 0`);
    await client.query(`INSERT INTO source_citations (chatbot_id, name, cited, last_cited_at)
      SELECT c.chatbot_id, e->>'name', count(DISTINCT m.id), max(m.created_at)
        FROM messages m JOIN conversations c ON c.id = m.conversation_id CROSS JOIN LATERAL jsonb_array_elements(m.sources::jsonb) e
       WHERE m.role = 'assistant' AND m.sources <> '[]' GROUP BY 1, 2`);
    // Ids were given explicitly: move the sequences past them, as db copy does.
    await client.query("SELECT setval(pg_get_serial_sequence('conversations', 'id'), (SELECT max(id) FROM conversations))");
    await client.query("COMMIT");
    // As autovacuum would after a bulk load: without statistics PostgreSQL plans as if the tables were empty.
    await client.query("ANALYZE");
    const count = async (table) => Number((await client.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    return { messages: await count("messages"), conversations: await count("conversations") };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    await client.end();
  }
}
