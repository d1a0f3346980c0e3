import type { Worker } from "node:worker_threads";
import { startModuleWorker } from "../core/module-worker.js";
import { loadHtmlRenderer } from "./render-html.js";
import type { ReleaseMemory, RenderAnswer, RenderJob } from "./render-worker.js";

/** Turns Markdown (model replies, operator messages) into HTML that is safe to insert into a page. */
export interface Renderer {
  render(markdown: string): Promise<string>;
  /**
   * Asks the workers to collect their garbage, for a quiet server: their heaps
   * shrink while jsdom stays loaded, so the next reply does not wait for it.
   */
  releaseMemory(): void;
  /** Stops the worker; later renders start a new one. */
  close(): Promise<void>;
  /** Figures for metrics: workers started so far, worker threads alive, renders waiting, and whether renders run in this thread. */
  stats(): { workersStarted: number; running: number; pending: number; inThread: boolean };
}

export interface RendererOptions {
  /** Renders a worker does before a fresh one replaces it, dropping what jsdom retained. Default 2 000. */
  recycleAfter?: number;
  /**
   * Longest one render may take, from when its worker has loaded, before it is answered as escaped text and
   * the worker replaced, in ms. Default 10 000.
   */
  timeoutMs?: number;
  /** Most renders waiting for the worker; beyond it replies are answered as escaped text. Default 500. */
  maxQueue?: number;
  /** Render in this thread instead of a worker (jsdom stays loaded; no recycling). Default false. */
  inThread?: boolean;
  /** Told when a reply had to be answered as escaped text, or the worker could not start. Default: `console.error`. */
  onFailure?: (error: Error) => void;
}

interface Job {
  id: number;
  markdown: string;
  /** Workers it has been sent to: one that kills every worker it reaches is answered as text after two. */
  attempts: number;
  resolve(html: string): void;
  /** Set once its worker is ready: see `startClock`. */
  timer?: NodeJS.Timeout;
  /** Whether its timing out also stops the worker (not on a second attempt, which already has a fresh one). */
  stopsWorker: boolean;
}

/** One worker thread and the jobs it has been sent. */
interface Slot {
  worker: Worker;
  jobs: Map<number, Job>;
  /** Jobs sent to it so far, for recycling. */
  sent: number;
  ready: boolean;
  /** Set when it is being stopped on purpose (recycled, timed out, closed). */
  stopping: boolean;
}

/**
 * Renders plain Markdown (no raw HTML: see `renderPlainMarkdown`) in this
 * thread, as its HTML needs no sanitiser; the rest in a worker thread, because
 * jsdom (which DOMPurify needs on Node) costs ~100 MB and a second or more of
 * CPU to load, and keeps memory from every sanitised document
 * (isomorphic-dompurify#368, DOMPurify#1089). Since most replies are plain,
 * the worker starts with the first reply that is not: that reply waits for
 * jsdom to load, once, and a server whose replies are all plain never loads it.
 * The worker is replaced by a fresh one every `recycleAfter` renders; a
 * replacement loads jsdom before it takes over, so no render waits for it.
 *
 * The worker is kept through idle periods, not stopped: loading jsdom again
 * costs a second or more, which the first reply after a quiet spell would pay
 * whenever the model answers faster than that (the extractive model always
 * does). A quiet server calls `releaseMemory()`, and the worker collects its
 * garbage: V8's memory reducer was meant to shrink an idle heap by itself but
 * often never started; what stays is jsdom's live state (bench scenario 7
 * measures idle RSS and the first reply after idling). Replacing the worker at
 * idle gave no memory back in measurements. A lighter DOM
 * than jsdom under DOMPurify was not taken: DOMPurify is only verified against
 * real browsers and jsdom, and a parser that differs from the browser's is
 * where sanitiser bypasses come from. A render that times
 * out, is refused by a full queue, or whose worker dies is answered as
 * escaped plain text, which is safe anywhere, and reported. Where no worker
 * can start (the worker file is missing from a custom bundle), renders run in
 * this thread, as safe but without the memory bounds.
 *
 * @example
 * const renderer = createRenderer();
 * await renderer.render("**Hi** <script>alert(1)</script>"); // "<p><strong>Hi</strong> </p>"
 * await renderer.close();
 */
export function createRenderer({
  recycleAfter = 2_000,
  timeoutMs = 10_000,
  maxQueue = 500,
  inThread = false,
  onFailure = (error) => console.error(`chatsvc: ${error.message}`),
}: RendererOptions = {}): Renderer {
  let active: Slot | undefined;
  let warming: Slot | undefined;
  const retiring = new Set<Slot>();
  let inline: Promise<(markdown: string) => string> | undefined;
  let nextId = 1;
  let closed = false;
  // marked is loaded with the first reply, not with the service: most processes (CLI commands) never render.
  let plainMarkdown: Promise<typeof import("./plain-markdown.js")> | undefined;
  let started = 0;

  const pending = () => (active?.jobs.size ?? 0) + (warming?.jobs.size ?? 0) + [...retiring].reduce((n, slot) => n + slot.jobs.size, 0);

  const stop = (slot: Slot) => {
    slot.stopping = true;
    if (active === slot) active = undefined;
    if (warming === slot) warming = undefined;
    retiring.delete(slot);
    void slot.worker.terminate();
  };

  const settle = (slot: Slot, job: Job, html: string) => {
    clearTimeout(job.timer);
    slot.jobs.delete(job.id);
    job.resolve(html);
    if (retiring.has(slot) && slot.jobs.size === 0) stop(slot);
    if (slot.jobs.size === 0) slot.worker.unref();
  };

  const fallback = (job: Job, slot: Slot | undefined, reason: string) => {
    onFailure(new Error(`a reply was sent as escaped text: ${reason}`));
    if (slot) settle(slot, job, escapedText(job.markdown));
    else job.resolve(escapedText(job.markdown));
  };

  const spawn = (): Slot | undefined => {
    let worker: Worker;
    try {
      worker = startWorker();
    } catch (error) {
      inline ??= startInline(error);
      return undefined;
    }
    started++;
    // Held open only while it has work: an idle worker must not keep the process alive.
    worker.unref();
    const slot: Slot = { worker, jobs: new Map(), sent: 0, ready: false, stopping: false };
    worker.on("message", (answer: RenderAnswer) => {
      if ("ready" in answer) {
        slot.ready = true;
        for (const job of slot.jobs.values()) startClock(slot, job);
        if (warming === slot) {
          // The replacement has loaded jsdom: it takes new renders, the old one finishes its own.
          if (active) retire(active);
          active = slot;
          warming = undefined;
        }
        return;
      }
      const job = slot.jobs.get(answer.id);
      if (!job) return;
      if ("html" in answer) settle(slot, job, answer.html);
      else fallback(job, slot, answer.error);
    });
    worker.on("error", (error) => {
      if (!slot.ready && !slot.stopping) inline ??= startInline(error);
    });
    worker.on("exit", () => {
      const orphans = [...slot.jobs.values()];
      const wasUnexpected = !slot.stopping;
      stop(slot);
      if (!wasUnexpected && orphans.length === 0) return;
      // A worker that died (or timed out) leaves its jobs to a fresh one, once.
      for (const job of orphans) {
        clearTimeout(job.timer);
        slot.jobs.delete(job.id);
        if (closed) job.resolve(escapedText(job.markdown));
        else if (job.attempts >= 2) fallback(job, undefined, "the render worker stopped twice while rendering it");
        else if (slot.ready) dispatch(job, false);
        else void renderInline(job);
      }
    });
    return slot;
  };

  const retire = (slot: Slot) => {
    if (active === slot) active = undefined;
    if (slot.jobs.size === 0) stop(slot);
    else retiring.add(slot);
  };

  const startInline = (error: unknown): Promise<(markdown: string) => string> => {
    onFailure(new Error(`the render worker could not start, rendering in this thread: ${error instanceof Error ? error.message : String(error)}`));
    return loadHtmlRenderer();
  };

  const renderInline = async (job: Job) => {
    inline ??= loadHtmlRenderer();
    clearTimeout(job.timer);
    try {
      job.resolve((await inline)(job.markdown));
    } catch (error) {
      fallback(job, undefined, error instanceof Error ? error.message : String(error));
    }
  };

  /*
   * A job's time limit runs from when its worker has loaded, not from when it was
   * sent: loading jsdom takes seconds on a busy machine, and counting it turned
   * replies into escaped text whenever the load was slow, not the render.
   */
  const startClock = (slot: Slot, job: Job) => {
    job.timer ??= setTimeout(() => {
      if (!slot.jobs.has(job.id)) return;
      // A render this slow means the worker is stuck on it: answer it as text, and replace the worker.
      fallback(job, slot, `rendering took over ${timeoutMs} ms`);
      if (job.stopsWorker) stop(slot);
    }, timeoutMs);
  };

  const dispatch = (job: Job, retry: boolean) => {
    if (inline || inThread) return void renderInline(job);
    if (!active) active = spawn();
    const slot = active;
    if (!slot) return void renderInline(job);
    if (slot.sent >= recycleAfter && !warming) warming = spawn();
    slot.sent++;
    job.attempts++;
    job.stopsWorker = retry;
    job.timer = undefined;
    slot.jobs.set(job.id, job);
    slot.worker.ref();
    if (slot.ready) startClock(slot, job);
    slot.worker.postMessage({ id: job.id, markdown: job.markdown } satisfies RenderJob);
  };

  return {
    async render(markdown) {
      const { renderPlainMarkdown } = await (plainMarkdown ??= import("./plain-markdown.js"));
      const plain = renderPlainMarkdown(markdown);
      if (plain !== undefined) return plain;
      closed = false;
      return new Promise<string>((resolve) => {
        const job: Job = { id: nextId++, markdown, attempts: 0, resolve, stopsWorker: true };
        if (pending() >= maxQueue) return fallback(job, undefined, `more than ${maxQueue} renders were waiting`);
        dispatch(job, true);
      });
    },
    releaseMemory() {
      for (const slot of [active, warming, ...retiring]) {
        if (slot?.ready && !slot.stopping) slot.worker.postMessage({ release: true } satisfies ReleaseMemory);
      }
    },
    stats() {
      return { workersStarted: started, running: [active, warming, ...retiring].filter(Boolean).length, pending: pending(), inThread: inline !== undefined };
    },
    async close() {
      closed = true;
      const slots = [active, warming, ...retiring].filter((slot): slot is Slot => slot !== undefined);
      for (const slot of slots) slot.stopping = true;
      await Promise.all(slots.map((slot) => slot.worker.terminate()));
    },
  };
}

/*
 * A smaller young generation than the default 48 MB: jsdom's import grows it to
 * the maximum, resident memory it never gives back. With 4 MB a render took
 * ~1.8x bare marked + DOMPurify in the same thread, with 16 MB ~1.3-1.5x. The
 * old-generation cap bounds what a worker can retain between recycles; one that
 * hits it dies and is replaced.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 192 };

/** The worker next to this module: `render-worker.js` in the build. */
function startWorker(): Worker {
  return startModuleWorker(import.meta.url, "render-worker", { resourceLimits: WORKER_LIMITS });
}

/** Markdown as escaped text in paragraphs: what a reply becomes when it cannot be rendered. */
export function escapedText(markdown: string): string {
  const escaped = markdown.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`).trim();
  if (escaped === "") return "";
  return escaped
    .split(/\n{2,}/)
    .map((paragraph) => `<p>${paragraph.replace(/\n/g, "<br>")}</p>`)
    .join("\n");
}
