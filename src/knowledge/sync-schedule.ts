import type { Knowledge } from "./types.js";

/** Instances check this often whether a round is due, at most: a due round waits at most this long. */
const MAX_CHECK_MS = 60_000;

/**
 * Runs {@link Knowledge.syncAll} in the background every `everyMs`: checks at
 * once and then every `min(everyMs, 1 min)`, and the lease decides whether
 * this instance runs the round (none ran for `everyMs`, nobody else is
 * running one). `stop()` aborts a running round between documents and waits for it.
 *
 * @example
 * const schedule = scheduleSync(service.knowledge, 24 * 3_600_000);
 * await schedule.stop();
 */
export function scheduleSync(
  knowledge: Pick<Knowledge, "syncAll">,
  everyMs: number,
  onError: (error: unknown) => void = (error) => console.error("chatsvc: web source sync failed", error),
): { stop(): Promise<void> } {
  const abort = new AbortController();
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

  const tick = () => {
    running = knowledge
      .syncAll({ ifOlderThanMs: everyMs, signal: abort.signal })
      .then(
        () => {},
        (error) => {
          if (!abort.signal.aborted) onError(error);
        },
      )
      .finally(() => {
        if (!abort.signal.aborted) timer = setTimeout(tick, Math.min(everyMs, MAX_CHECK_MS)).unref();
      });
  };
  timer = setTimeout(tick, 0).unref();

  return {
    async stop() {
      abort.abort();
      clearTimeout(timer);
      await running;
    },
  };
}
