/** The signal one upstream request runs under, and how to end it. */
export interface CallSignal {
  signal: AbortSignal;
  /** Cancels the upstream request, e.g. when the consumer of a stream stops early. */
  abort(): void;
  /** Releases the timer and the listener on the caller's signal. Call it when the call is over. */
  dispose(): void;
}

/**
 * Links the caller's signal and an optional timeout into one signal for an
 * upstream request. A timeout aborts with a `TimeoutError` reason, so failures
 * can tell a slow provider from a cancelled call. The listener on the caller's
 * signal is removed on `dispose()`, unlike `AbortSignal.any`, whose sources
 * keep references on Node 20 for as long as they live.
 *
 * @example
 * const call = createCallSignal(request.signal, 60_000);
 * try { await fetch(url, { signal: call.signal }) } finally { call.dispose() }
 */
export function createCallSignal(outer: AbortSignal | undefined, timeoutMs?: number): CallSignal {
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) controller.abort(outer.reason);
  else outer?.addEventListener("abort", onAbort, { once: true });
  const timer =
    timeoutMs && timeoutMs > 0 && !controller.signal.aborted
      ? setTimeout(() => controller.abort(new DOMException(`The model call took longer than ${timeoutMs} ms`, "TimeoutError")), timeoutMs)
      : undefined;
  timer?.unref?.();
  return {
    signal: controller.signal,
    abort: () => controller.abort(new DOMException("The consumer stopped reading the answer", "AbortError")),
    dispose() {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onAbort);
    },
  };
}
