import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let collect: (() => void) | undefined;

/**
 * Runs a full garbage collection in the calling thread and lets V8 shrink its
 * young generation and free pages: what a quiet server calls to give memory
 * back. V8's own memory reducer is meant to do this after idle periods but
 * does not start reliably (it waits for a mark-compact that a quiet server may
 * never run), so the heap kept the size of its last busy minute. Node exposes
 * no collection API without `--expose-gc`; the flag is set only while this
 * thread takes its `gc` function from a fresh context, so other contexts do
 * not get one. Returns false where that failed (another thread switched the
 * flag off in between); the next call tries again.
 *
 * @example
 * collectGarbage(); // true
 */
export function collectGarbage(): boolean {
  if (!collect) {
    setFlagsFromString("--expose-gc");
    try {
      const gc: unknown = runInNewContext("typeof gc === 'function' ? gc : undefined");
      if (typeof gc === "function") collect = gc as () => void;
    } finally {
      setFlagsFromString("--no-expose-gc");
    }
  }
  if (!collect) return false;
  collect();
  return true;
}
