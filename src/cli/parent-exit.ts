import { readFileSync } from "node:fs";

/**
 * Calls `onExit` once when this process's parent goes away (the process is then re-parented, to init or a subreaper),
 * or, when the parent is a shell, when the shell's parent does. Node has no event for it, so both are polled; the
 * timer does not keep the process alive.
 *
 * Why `serve` needs it: npm (`npx`, `npm run`) starts a bin through `sh -c` and passes SIGTERM or SIGINT to that
 * shell only. dash dies of SIGTERM without passing it on, so the server would keep running with parent 1 after npm
 * exits. npm killed outright (SIGKILL, as process managers do when a stop times out) leaves the shell running, so
 * our parent never changes: npm's exit is seen as the shell's parent changing. What no poll can see is SIGINT to npm
 * alone: dash holds it until its child (this server) exits, and npm waits for dash, so nothing changes anywhere.
 */
export function onParentExit(onExit: () => void, intervalMs = 250): void {
  const parent = process.ppid;
  const launcher = isShell(parent) ? parentOf(parent) : undefined;
  const timer = setInterval(() => {
    if (process.ppid === parent && (launcher === undefined || parentOf(parent) === launcher)) return;
    clearInterval(timer);
    onExit();
  }, intervalMs);
  timer.unref();
}

/** True when an npm script or `npx` started this process: `npm_lifecycle_event` is set for those only. */
export function startedByNpm(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.npm_lifecycle_event);
}

/** Read from /proc (Linux); elsewhere undefined, and only the parent is watched. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may contain spaces; the parent id is the second field after it.
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

function isShell(pid: number): boolean {
  try {
    return /^(sh|dash|bash|ash|zsh)$/.test(readFileSync(`/proc/${pid}/comm`, "utf8").trim());
  } catch {
    return false;
  }
}
