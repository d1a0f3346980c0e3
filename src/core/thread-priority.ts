import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

/** How much nicer than the rest of the process a background thread is made. */
const NICER_BY = 10;

/**
 * Makes the calling thread (a worker) yield the CPU to the process's other
 * threads when they compete for a core: its nice value is raised by
 * {@link NICER_BY} (capped at 19). A background worker doing CPU work next to
 * the main thread otherwise gets the same share of a busy core, so a request
 * waiting on the event loop waits for the worker's time slice as well.
 *
 * Linux only, best effort: there `setpriority(2)` given a thread id (from
 * `/proc/thread-self`, `<pid>/task/<tid>`) changes that thread alone. Elsewhere,
 * or if it fails, nothing changes. The thread keeps the value until it ends,
 * and no thread is reused for other work afterwards.
 *
 * @example
 * // First thing in the worker's entry:
 * yieldCpuToProcess();
 */
export function yieldCpuToProcess(): void {
  if (process.platform !== "linux") return;
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").at(-1));
    setPriority(tid, Math.min(19, getPriority(tid) + NICER_BY));
  } catch {
    // Best effort: the worker runs at the process's priority, as it would elsewhere.
  }
}
