import type { AttemptRecord, DueDelivery, OutboxStore, WebhookRecord, WebhookRegistration, WebhookStore } from "../../core/storage/index.js";
import type { CommitBatch } from "./commit-batch.js";
import type { Recorder } from "./events.js";
import type { Sqlite } from "./open.js";

type Row = Omit<WebhookRecord, "is_active"> & { is_active: number };

const toRecord = (row: Row): WebhookRecord => ({ ...row, is_active: row.is_active !== 0 });

export function createWebhookStore(sqlite: Sqlite): WebhookStore {
  const byId = sqlite.prepare<[number], Row>("SELECT * FROM webhooks WHERE id = ?");
  const byUrl = sqlite.prepare<[number, string], Row>("SELECT * FROM webhooks WHERE organization_id = ? AND url = ?");
  const all = sqlite.prepare<[], Row>("SELECT * FROM webhooks ORDER BY id");
  const ofOrg = sqlite.prepare<[number], Row>("SELECT * FROM webhooks WHERE organization_id = ? ORDER BY id");
  const orgExists = sqlite.prepare<[number], { x: number }>("SELECT 1 AS x FROM organizations WHERE id = ?");
  const reactivate = sqlite.prepare<[string, string | null, string, number], Row>(
    "UPDATE webhooks SET events = ?, name = coalesce(?, name), is_active = 1, updated_at = ? WHERE id = ? RETURNING *",
  );
  const insert = sqlite.prepare<[number, string, string, string, string, string, string], Row>(
    "INSERT INTO webhooks (organization_id, name, url, events, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *",
  );
  const remove = sqlite.prepare<[number]>("DELETE FROM webhooks WHERE id = ?");

  const register = sqlite.transaction((r: WebhookRegistration): { created: boolean; webhook: WebhookRecord } | "no-organization" => {
    if (!orgExists.get(r.organization_id)) return "no-organization";
    const events = JSON.stringify(r.events);
    const existing = byUrl.get(r.organization_id, r.url);
    if (existing) return { created: false, webhook: toRecord(reactivate.get(events, r.name, r.now, existing.id)!) };
    return { created: true, webhook: toRecord(insert.get(r.organization_id, r.name ?? r.default_name, r.url, events, r.secret, r.now, r.now)!) };
  });

  const remover = sqlite.transaction((id: number, organizationId: number): "deleted" | "missing" | "forbidden" => {
    const row = byId.get(id);
    if (!row) return "missing";
    if (row.organization_id !== organizationId) return "forbidden";
    remove.run(id);
    return "deleted";
  });

  return {
    async register(registration) {
      return register.immediate(registration);
    },
    async list(organizationId) {
      return (organizationId === undefined ? all.all() : ofOrg.all(organizationId)).map(toRecord);
    },
    async find(id) {
      const row = byId.get(id);
      return row && toRecord(row);
    },
    async delete(id, organizationId) {
      return remover.immediate(id, organizationId);
    },
  };
}

/** What a batch's attempts add to one webhook's counters: written once per webhook, not once per attempt. */
interface Tally {
  total: number;
  failed: number;
  now: string;
  failure: { code: number | null; error: string; now: string } | null;
}

export function createOutboxStore(sqlite: Sqlite, record: Recorder, batched: CommitBatch): OutboxStore {
  const due = sqlite.prepare<[number, number], DueDelivery>(
    `SELECT d.id, d.webhook_id, d.message_id, d.payload, d.attempts, w.url, w.secret
       FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND w.is_active = 1
      ORDER BY d.next_attempt_at, d.id LIMIT ?`,
  );
  const lease = sqlite.prepare<[number, number]>("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ?");
  // ORDER BY + LIMIT walks the due index and stops at the first row; MIN() over the join would scan every pending row.
  const nextDue = sqlite
    .prepare<[], number>(
      `SELECT d.next_attempt_at FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.status = 'pending' AND w.is_active = 1 ORDER BY d.next_attempt_at LIMIT 1`,
    )
    .pluck();
  const finishRow = sqlite.prepare<{ id: number; status: string; attempts: number; next: number; code: number | null; error: string | null; now: string }>(
    `UPDATE webhook_deliveries SET status = @status, attempts = @attempts, next_attempt_at = @next, last_status = @code, last_error = @error, updated_at = @now
      WHERE id = @id AND status = 'pending'`,
  );
  const count = sqlite.prepare<{ id: number; total: number; failed: number; now: string }>(
    `UPDATE webhooks SET total_triggers = total_triggers + @total, failed_triggers = failed_triggers + @failed, last_triggered_at = @now
      WHERE id = @id`,
  );
  const noteFailure = sqlite.prepare<{ id: number; code: number | null; error: string; now: string }>(
    "UPDATE webhooks SET last_failure_at = @now, last_failure_status = @code, last_failure_error = @error WHERE id = @id",
  );
  const deactivate = sqlite.prepare<[string, number]>("UPDATE webhooks SET is_active = 0, updated_at = ? WHERE id = ?");
  const dropPending = sqlite.prepare<[string, string, number]>(
    "UPDATE webhook_deliveries SET status = 'failed', last_error = ?, updated_at = ? WHERE webhook_id = ? AND status = 'pending'",
  );
  // A finished row's next_attempt_at is when it finished, so the due index serves this too.
  const prune = sqlite.prepare<[number]>("DELETE FROM webhook_deliveries WHERE status IN ('delivered', 'failed') AND next_attempt_at < ?");
  const releaseOne = sqlite.prepare<[number, number]>("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ? AND status = 'pending'");

  const recordAttempt = (a: AttemptRecord, tallies: Map<number, Tally>) => {
    const changed = finishRow.run({ id: a.delivery_id, status: a.status, attempts: a.attempts, next: a.next_attempt_at, code: a.http_status, error: a.error, now: a.now }).changes;
    // The row is gone (webhook deleted) or another process finished it: nothing to count.
    if (changed === 0) return;
    let tally = tallies.get(a.webhook_id);
    if (!tally) tallies.set(a.webhook_id, (tally = { total: 0, failed: 0, now: a.now, failure: null }));
    if (a.first_attempt) tally.total++;
    if (a.status === "failed") tally.failed++;
    tally.now = a.now;
    if (a.error !== null) tally.failure = { code: a.http_status, error: a.error, now: a.now };
    if (a.gone) {
      deactivate.run(a.now, a.webhook_id);
      dropPending.run("Not sent: the webhook was deactivated (410 Gone)", a.now, a.webhook_id);
    }
  };

  // One transaction records every finished attempt and claims the next rows:
  // at thousands of deliveries a second, per-row transactions would be the bottleneck.
  const settle = sqlite.transaction((attempts: AttemptRecord[], claim: { now: number; limit: number; leaseUntil: number }) => {
    const tallies = new Map<number, Tally>();
    for (const a of attempts) recordAttempt(a, tallies);
    for (const [id, t] of tallies) {
      count.run({ id, total: t.total, failed: t.failed, now: t.now });
      if (t.failure) noteFailure.run({ id, ...t.failure });
    }
    if (claim.limit <= 0) return [];
    const rows = due.all(claim.now, claim.limit);
    for (const row of rows) lease.run(claim.leaseUntil, row.id);
    return rows;
  });

  const release = sqlite.transaction((ids: number[], now: number) => {
    for (const id of ids) releaseOne.run(now, id);
  });

  const recordAlone = sqlite.transaction(record);

  return {
    async record(event) {
      return recordAlone.immediate(event);
    },
    async settle(attempts, claim) {
      // An idle poll asks for the write lock only when a row is due: a bulk write (ingestion on the writer thread)
      // holds that lock, and waiting for it here would hold the event loop.
      if (attempts.length === 0 && (claim.limit <= 0 || due.get(claim.now, 1) === undefined)) return [];
      // In the commit the conversation starts of this turn share: it often claims the rows they queued.
      return batched(() => settle(attempts, claim));
    },
    async nextDue() {
      return nextDue.get() ?? undefined;
    },
    async release(ids, now) {
      if (ids.length > 0) release.immediate(ids, now);
    },
    async prune(before) {
      prune.run(before);
    },
  };
}
