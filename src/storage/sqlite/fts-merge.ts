import type { Sqlite } from "./open.js";

/**
 * Leaf pages of merged index one step writes: a step is its own short write
 * transaction, small enough that a request waiting behind it is not noticed.
 */
const STEP_PAGES = 64;

/**
 * Merges `chunks_fts` segments the way FTS5's automerge would (a level is
 * merged once it holds `usermerge` segments, a merge under way is carried on),
 * but in small steps with the event loop free between them. Automerge is off
 * (migration 0022) because it merged inside the write that added a segment, a
 * fixed number of pages per index level: a synchronous step that grew with the
 * index and held the event loop far longer than the write itself.
 *
 * `around` runs each step's transaction (the writer thread passes its write gate).
 *
 * @example
 * const merger = createFullTextMerger(sqlite);
 * writeChunks();
 * await merger.settle();
 */
export function createFullTextMerger(sqlite: Sqlite, around: (step: () => boolean) => boolean = (step) => step()): { settle(): Promise<void> } {
  const merge = sqlite.prepare<[number]>("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('merge', ?)");
  const totalChanges = sqlite.prepare<[], number>("SELECT total_changes()").pluck();
  // SQLite's documented signal: a merge that found nothing to do changes fewer than two rows.
  const step = sqlite.transaction(() => {
    const before = totalChanges.get()!;
    merge.run(STEP_PAGES);
    return totalChanges.get()! - before >= 2;
  });
  return {
    /**
     * Merges until no level needs it; a write made meanwhile (by anyone) is merged too.
     * Never fails: it runs after the caller's write has committed, so an error here
     * (the connection closed in between, another process holding the write lock too
     * long, a full disk) must not make that write look failed and be retried. The
     * segments stay searchable unmerged and the next write merges what is left.
     */
    async settle() {
      try {
        while (sqlite.open && around(() => step.immediate())) await new Promise(setImmediate);
      } catch {
        // Left for the next write's merge (see above).
      }
    },
  };
}
