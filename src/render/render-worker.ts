// The render worker's entry (built as its own file, `render-worker.js`): renders
// Markdown to sanitised HTML for the pool in render.ts, one message per reply.
import { parentPort } from "node:worker_threads";
import { loadHtmlRenderer } from "./render-html.js";

/** A job from the pool. */
export interface RenderJob {
  id: number;
  markdown: string;
}

/** The answer to a job, or `ready` once the renderer has loaded. */
export type RenderAnswer = { ready: true } | { id: number; html: string } | { id: number; error: string };

const port = parentPort!;
const toHtml = await loadHtmlRenderer({ exclusive: true });
port.on("message", ({ id, markdown }: RenderJob) => {
  let answer: RenderAnswer;
  try {
    answer = { id, html: toHtml(markdown) };
  } catch (error) {
    answer = { id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(answer);
});
port.postMessage({ ready: true } satisfies RenderAnswer);
