/**
 * Calls `onExit` once when this process's parent goes away (the process is then re-parented, to init or a subreaper).
 * Node has no event for it, so the parent id is polled; the timer does not keep the process alive.
 *
 * Why `serve` needs it: npm (`npx`, `npm run`) starts a bin through `sh -c`, and on SIGTERM or SIGINT it signals only
 * that shell. dash dies without passing the signal on, so the server would keep running with parent 1 after npm exits.
 */
export function onParentExit(onExit: () => void, intervalMs = 250): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onExit();
  }, intervalMs);
  timer.unref();
}

/** True when an npm script or `npx` started this process: `npm_lifecycle_event` is set for those only. */
export function startedByNpm(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.npm_lifecycle_event);
}
