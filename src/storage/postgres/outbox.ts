import type pg from "pg";
import type { AttemptRecord, DueDelivery, OutboxEncoder, OutboxStore } from "../../core/storage/index.js";
import { all, one, run, statement, transaction, type Queryable } from "./client.js";
import { recordEvent } from "./events.js";

/*
 * Finished attempts are recorded in one statement per batch. A row is only
 * updated while it is still pending at the attempt this instance made
 * (`attempts = $n - 1`): when a lease ran out and another instance took the row
 * over, the slower outcome is dropped instead of counted twice. The webhooks'
 * counters move by what was actually recorded.
 */
const record = statement(
  "outbox_record",
  `WITH a AS (
     SELECT * FROM unnest($1::int[], $2::text[], $3::int[], $4::bigint[], $5::int[], $6::text[], $7::boolean[])
       WITH ORDINALITY AS a(id, status, attempts, next, code, error, first, ord)
   ), done AS (
     UPDATE webhook_deliveries d SET status = a.status, attempts = a.attempts, next_attempt_at = a.next,
            last_status = a.code, last_error = a.error, updated_at = $8
       FROM a WHERE d.id = a.id AND d.status = 'pending' AND d.attempts = a.attempts - 1
     RETURNING d.webhook_id, a.status, a.code, a.error, a.first, a.ord
   ), totals AS (
     SELECT webhook_id,
            count(*) FILTER (WHERE first)::int AS total,
            count(*) FILTER (WHERE status = 'failed')::int AS failed,
            bool_or(error IS NOT NULL) AS any_failure,
            (array_agg(code ORDER BY ord DESC) FILTER (WHERE error IS NOT NULL))[1] AS code,
            (array_agg(error ORDER BY ord DESC) FILTER (WHERE error IS NOT NULL))[1] AS error
       FROM done GROUP BY webhook_id
   )
   UPDATE webhooks w SET total_triggers = w.total_triggers + t.total, failed_triggers = w.failed_triggers + t.failed,
          last_triggered_at = $8,
          last_failure_at = CASE WHEN t.any_failure THEN $8 ELSE w.last_failure_at END,
          last_failure_status = CASE WHEN t.any_failure THEN t.code ELSE w.last_failure_status END,
          last_failure_error = CASE WHEN t.any_failure THEN t.error ELSE w.last_failure_error END
     FROM totals t WHERE w.id = t.webhook_id`,
);
/*
 * Recording locks the webhooks first, in id order, then their deliveries: the order a
 * webhook's deletion takes (the webhook, then its deliveries by cascade), so the two
 * cannot deadlock. NO KEY UPDATE leaves new deliveries free to reference the webhook.
 */
const lockWebhooks = statement("outbox_lock_webhooks", "SELECT id FROM webhooks WHERE id = ANY($1::int[]) ORDER BY id FOR NO KEY UPDATE");
const deactivate = statement("outbox_deactivate", "UPDATE webhooks SET is_active = false, updated_at = $2 WHERE id = $1");
const dropPending = statement(
  "outbox_drop_pending",
  "UPDATE webhook_deliveries SET status = 'failed', last_error = $2, updated_at = $3 WHERE webhook_id = $1 AND status = 'pending'",
);
/*
 * The claim: due rows of active webhooks, oldest due first, leased by moving their
 * due time to the lease's end. SKIP LOCKED lets instances claim side by side without
 * waiting on each other's rows; a row leased by one is not due for the others until
 * the lease runs out, which is how the rows of a killed instance come back.
 */
const claim = statement(
  "outbox_claim",
  `WITH due AS (
     SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND w.is_active
      ORDER BY d.next_attempt_at, d.id LIMIT $2
        FOR UPDATE OF d SKIP LOCKED
   )
   UPDATE webhook_deliveries d SET next_attempt_at = $3 FROM due, webhooks w
    WHERE d.id = due.id AND w.id = d.webhook_id
   RETURNING d.id, d.webhook_id, d.message_id, d.payload, d.attempts, w.url, w.secret`,
);
const nextDue = statement(
  "outbox_next_due",
  `SELECT d.next_attempt_at FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.status = 'pending' AND w.is_active ORDER BY d.next_attempt_at LIMIT 1`,
);
const release = statement("outbox_release", "UPDATE webhook_deliveries SET next_attempt_at = $2 WHERE id = ANY($1::int[]) AND status = 'pending'");
// A finished row's next_attempt_at is when it finished, so the due index serves this too.
const prune = statement("outbox_prune", "DELETE FROM webhook_deliveries WHERE status IN ('delivered', 'failed') AND next_attempt_at < $1");

const GONE_ERROR = "Not sent: the webhook was deactivated (410 Gone)";

async function recordAttempts(tx: Queryable, attempts: AttemptRecord[]): Promise<void> {
  if (attempts.length === 0) return;
  const now = attempts[attempts.length - 1]!.now;
  await run(tx, lockWebhooks, [[...new Set(attempts.map((a) => a.webhook_id))]]);
  await run(tx, record, [
    attempts.map((a) => a.delivery_id),
    attempts.map((a) => a.status),
    attempts.map((a) => a.attempts),
    attempts.map((a) => a.next_attempt_at),
    attempts.map((a) => a.http_status),
    attempts.map((a) => a.error),
    attempts.map((a) => a.first_attempt),
    now,
  ]);
  for (const gone of attempts.filter((a) => a.gone)) {
    await run(tx, deactivate, [gone.webhook_id, gone.now]);
    await run(tx, dropPending, [gone.webhook_id, GONE_ERROR, gone.now]);
  }
}

export function createPgOutboxStore(pool: pg.Pool, encode: OutboxEncoder, onQueued: (deliveries: number) => void): OutboxStore {
  return {
    async record(event) {
      // One statement: it is its own transaction.
      const recorded = await recordEvent(pool, encode, event);
      if (recorded.deliveries > 0) onQueued(recorded.deliveries);
      return recorded;
    },
    async settle(attempts, { now, limit, leaseUntil }) {
      // Without finished attempts the claim is one statement: no transaction needed.
      if (attempts.length === 0) return limit > 0 ? all<DueDelivery>(pool, claim, [now, limit, leaseUntil]) : [];
      return transaction(pool, async (tx) => {
        await recordAttempts(tx, attempts);
        return limit > 0 ? all<DueDelivery>(tx, claim, [now, limit, leaseUntil]) : [];
      });
    },
    nextDue: async () => {
      const row = await one<{ next_attempt_at: string }>(pool, nextDue);
      return row ? Number(row.next_attempt_at) : undefined;
    },
    async release(deliveryIds, now) {
      if (deliveryIds.length > 0) await run(pool, release, [deliveryIds, now]);
    },
    async prune(before) {
      await run(pool, prune, [before]);
    },
  };
}
