import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Chatbots } from "../core/chatbots.js";
import type { LeaseStore } from "../core/storage/index.js";
import type { IngestDeps } from "./ingest.js";
import type { SyncRound } from "./types.js";

/** The lease every instance asks for before a round. */
const SYNC_LEASE = "knowledge.sync";
/** A holder that dies frees the lease after this; a live one renews it at a third of it. */
const LEASE_TTL_MS = 10 * 60_000;

/**
 * Sync rounds over every chatbot with web documents, one instance at a time:
 * a round runs only while this service holds the {@link SYNC_LEASE} lease in
 * the database, renewed as long as the round lasts. A completed round is
 * recorded on release, and `ifOlderThanMs` asks the lease to refuse until the
 * last completed round is that old, so instances that all schedule rounds run
 * one per period between them.
 *
 * @example
 * const rounds = createSyncRounds(deps, leases, chatbots);
 * const round = await rounds.syncAll({ ifOlderThanMs: 24 * 3_600_000 });
 */
export function createSyncRounds(deps: IngestDeps, leases: LeaseStore, chatbots: Pick<Chatbots, "list">) {
  const holder = `${hostname()}:${process.pid}:${randomUUID()}`;
  const listeners = new Set<(round: SyncRound) => void>();

  return {
    async syncAll({ ifOlderThanMs, signal }: { ifOlderThanMs?: number; signal?: AbortSignal } = {}): Promise<SyncRound | undefined> {
      if (!(await leases.acquire(SYNC_LEASE, holder, { ttlMs: LEASE_TTL_MS, ...(ifOlderThanMs !== undefined && { minIntervalMs: ifOlderThanMs }) }))) return undefined;
      // A failed renewal (database briefly away) is retried at the next one; only if all fail does the lease lapse.
      const renew = setInterval(() => void leases.acquire(SYNC_LEASE, holder, { ttlMs: LEASE_TTL_MS }).catch(() => {}), LEASE_TTL_MS / 3);
      renew.unref();
      const round: SyncRound = { chatbots: [], aborted: false };
      let completed = false;
      try {
        const ids = new Set(await deps.store.chatbotsWithWebDocuments());
        // Loaded here, not with the service: fetching and parsing pages is for the rounds that run.
        const { syncChatbot } = await import("./sync.js");
        for (const bot of await chatbots.list()) {
          if (!ids.has(bot.id)) continue;
          if (signal?.aborted) break;
          round.chatbots.push({ slug: bot.slug, report: await syncChatbot(deps, bot.id, { signal }) });
        }
        round.aborted = signal?.aborted ?? false;
        completed = !round.aborted;
      } finally {
        clearInterval(renew);
        // Only a round that went through counts for the interval: a failed or aborted one is due again at the next check.
        await leases.release(SYNC_LEASE, holder, completed);
      }
      for (const listener of listeners) listener(round);
      return round;
    },

    onSyncRound(listener: (round: SyncRound) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
