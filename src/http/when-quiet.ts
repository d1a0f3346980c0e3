import type { Server } from "node:http";

/**
 * Calls `onQuiet` once whenever `server` has had no new request for at least
 * `afterMs` (at most half as long again), then again only after requests
 * resumed and stopped. Requests are counted, not timed: a tick every half
 * period compares the count, so a request costs one increment. Returns a
 * function that stops watching; the timer never keeps the process alive.
 *
 * @example
 * const stop = whenQuiet(server, 10_000, () => service.releaseMemory());
 */
export function whenQuiet(server: Server, afterMs: number, onQuiet: () => void): () => void {
  let requests = 0;
  let seen = 0;
  let quietTicks = 0;
  let done = false;
  const count = () => {
    requests++;
  };
  server.on("request", count);
  const timer = setInterval(() => {
    if (requests !== seen) {
      seen = requests;
      quietTicks = 0;
      done = false;
      return;
    }
    if (done || ++quietTicks < 2) return;
    done = true;
    onQuiet();
  }, afterMs / 2);
  timer.unref();
  return () => {
    clearInterval(timer);
    server.off("request", count);
  };
}
