import type pg from "pg";
import type { ChangeFeed, ChangeTopic } from "../../core/storage/index.js";
import { readRevisions } from "./revisions.js";

/** How often the counters are read: caches follow another instance's writes within this (plus a query). */
const POLL_MS = 250;
const TOPICS = ["keys", "chatbots", "knowledge", "settings"] as const satisfies readonly ChangeTopic[];

/**
 * The change feed on PostgreSQL: the `revisions` counters (bumped by the changing
 * transaction, or by trigger), read in the background and answered from memory,
 * since `version()` is called synchronously on hot paths (every authenticated request).
 *
 * @example
 * const feed = createChangeFeed(pool);
 * feed.version("keys"); // differs once another instance disabled a key
 * feed.close();
 */
export function createChangeFeed(pool: pg.Pool, onError: (error: unknown) => void): ChangeFeed & { ready: Promise<void>; close(): void } {
  const versions = new Map<ChangeTopic, number>(TOPICS.map((t) => [t, 0]));
  // Until the first read succeeds, and after a failed one, every call answers a new number:
  // a cache that cannot learn about changes must not be trusted.
  let unknown = 0;
  let stale = true;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const poll = async () => {
    try {
      const read = await readRevisions(pool, TOPICS);
      for (const topic of TOPICS) versions.set(topic, read.get(topic)!);
      stale = false;
    } catch (error) {
      if (!stale) onError(error);
      stale = true;
    }
    if (!closed) {
      timer = setTimeout(poll, POLL_MS);
      timer.unref();
    }
  };
  const ready = poll();

  return {
    ready,
    version: (topic) => (stale ? --unknown : versions.get(topic)!),
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}
