import type { Sqlite } from "./open.js";
import type { WriteGate } from "./write-gate.js";

/** Runs a write (a `sqlite.transaction` function call) in the next shared commit; settles after it. */
export type CommitBatch = <T>(write: () => T) => Promise<T>;

/**
 * Commits this close together are a burst: the log grows
 * fast enough that SQLite's own checkpoints, run by the committing
 * connection, would stall the event loop on their page copies and fsyncs.
 */
const BURST_COMMITS_PER_SECOND = 20;

export interface CommitBatchOptions {
  /** Called on every commit of a burst (e.g. to move checkpoints to their own thread). */
  onBurst?: () => void;
  /** Commits pass through it (see write-gate.ts). */
  gate?: WriteGate;
}

interface Queued {
  write: () => unknown;
  resolve: (value: never) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: the writes asked for within one turn of the event loop run in
 * one IMMEDIATE transaction, each in a savepoint of its own (pass a
 * `sqlite.transaction` function: nested, it takes a savepoint), so one that
 * throws is rolled back alone and only its caller sees the error. A commit
 * costs a lock, a WAL append of every page touched and often more than the
 * statements: writes arriving together share it. Each promise settles after
 * the commit, so nothing is answered before it is durable; a failed commit
 * rejects every write of the batch.
 *
 * @example
 * const batched = createCommitBatch(sqlite);
 * const id = await batched(() => insertConversation(row));
 */
export function createCommitBatch(sqlite: Sqlite, { onBurst, gate }: CommitBatchOptions = {}): CommitBatch {
  let queue: Queued[] = [];
  let windowStart = 0;
  let commitsInWindow = 0;

  const noteCommit = () => {
    const now = performance.now();
    if (now - windowStart > 1000) {
      windowStart = now;
      commitsInWindow = 0;
    }
    if (++commitsInWindow >= BURST_COMMITS_PER_SECOND) onBurst?.();
  };

  const runAll = sqlite.transaction((items: Queued[]) =>
    items.map((item) => {
      try {
        return { ok: true as const, value: item.write() };
      } catch (error) {
        return { ok: false as const, error };
      }
    }),
  );

  const commit = (items: Queued[]) => {
    const outcomes = runAll.immediate(items);
    noteCommit();
    outcomes.forEach((outcome, i) => (outcome.ok ? items[i]!.resolve(outcome.value as never) : items[i]!.reject(outcome.error)));
  };

  const flush = () => {
    const items = queue;
    queue = [];
    const failed = (error: unknown) => {
      for (const item of items) item.reject(error);
    };
    try {
      const committed = gate ? gate.run(() => commit(items)) : commit(items);
      if (committed instanceof Promise) committed.catch(failed);
    } catch (error) {
      failed(error);
    }
  };

  return <T>(write: () => T) =>
    new Promise<T>((resolve, reject) => {
      // setImmediate: after the I/O callbacks of this turn, so requests read together commit together.
      if (queue.length === 0) setImmediate(flush);
      queue.push({ write, resolve: resolve as (value: never) => void, reject });
    });
}
