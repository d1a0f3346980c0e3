import { systemClock, type Clock } from "./clock.js";
import type { DeletedCounts, LeaseStore, OrgStore, PrivacyStore } from "./storage/index.js";

const DAY_MS = 24 * 60 * 60 * 1000;
/** The lease that lets one instance at a time run the pass. */
export const RETENTION_LEASE = "retention";

/** What one pass did for one organisation. */
export interface RetentionResult {
  organization_id: number;
  retention_days: number;
  /** Conversations whose last activity (`last_message_at`) is before this were deleted. */
  cutoff: string;
  deleted: DeletedCounts;
}

export interface RetentionSchedule {
  /** This instance's name in the lease (unique per process). */
  holder: string;
  /** How often to check whether a pass is due. Default one hour; a pass runs at most once a day across instances. */
  checkEveryMs?: number;
  /** Where a failed pass is reported; the next check tries again. */
  onError?: (error: unknown) => void;
  /** Told what each pass this instance ran deleted (organisations with retention set). */
  onPass?: (results: RetentionResult[]) => void;
}

export type Retention = ReturnType<typeof createRetention>;

/**
 * Per-organisation retention: conversations inactive (by `last_message_at`,
 * which every message moves; a conversation without messages has its start
 * time there) for more than the organisation's `retention_days` are deleted
 * with their messages, leads and webhook outbox rows, one transaction and one
 * audit row per organisation.
 *
 * @example
 * await service.retention.run({ now: new Date("2030-01-01") }); // one pass, now
 * service.retention.start({ holder: "instance-1" });            // daily, one instance at a time
 */
export function createRetention({ orgs, privacy, leases }: { orgs: OrgStore; privacy: PrivacyStore; leases: LeaseStore }, { clock = systemClock }: { clock?: Clock } = {}) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;

  /** One pass over every organisation with retention set. */
  const run = async ({ now = clock(), actor = "serve (retention)" }: { now?: Date; actor?: string } = {}): Promise<RetentionResult[]> => {
    const results: RetentionResult[] = [];
    for (const org of await orgs.list()) {
      if (org.retention_days === null) continue;
      const cutoff = new Date(now.getTime() - org.retention_days * DAY_MS).toISOString();
      const detail = JSON.stringify({ retention_days: org.retention_days, cutoff });
      const deleted = await privacy.purgeInactive(org.id, cutoff, { action: "retention", actor, detail, created_at: now.toISOString() });
      results.push({ organization_id: org.id, retention_days: org.retention_days, cutoff, deleted });
    }
    return results;
  };

  /** A pass when none ran (anywhere) in the last day and no other instance is running one. */
  const runIfDue = async (holder: string): Promise<RetentionResult[] | undefined> => {
    if (!(await leases.acquire(RETENTION_LEASE, holder, { ttlMs: 30 * 60 * 1000, minIntervalMs: DAY_MS }))) return undefined;
    let completed = false;
    try {
      const results = await run();
      completed = true;
      return results;
    } finally {
      await leases.release(RETENTION_LEASE, holder, completed);
    }
  };

  return {
    run,
    runIfDue,

    /** Checks now and then every `checkEveryMs` whether a pass is due (see {@link runIfDue}); `stop()` ends it. */
    start({ holder, checkEveryMs = 60 * 60 * 1000, onError = (e) => console.error("chatsvc: retention pass failed", e), onPass }: RetentionSchedule): void {
      if (timer) return;
      const tick = () => {
        running = runIfDue(holder)
          .then((results) => results && onPass?.(results))
          .catch(onError)
          .finally(() => {
            running = undefined;
            if (timer) timer = setTimeout(tick, checkEveryMs).unref();
          });
      };
      timer = setTimeout(tick, 0).unref();
    },

    /** Stops the schedule and waits for a pass in progress. */
    async stop(): Promise<void> {
      clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
