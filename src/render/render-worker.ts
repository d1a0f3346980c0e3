// The render worker's entry (built as its own file, `render-worker.js`): renders
// Markdown to sanitised HTML for the pool in render.ts, one message per reply.
import { parentPort } from "node:worker_threads";
import { collectGarbage } from "../core/collect-garbage.js";
import { loadHtmlRenderer } from "./render-html.js";

/** A job from the pool. */
export interface RenderJob {
  id: number;
  markdown: string;
}

/** Sent when the server has been quiet: collect garbage, so the idle worker's heap shrinks. */
export interface ReleaseMemory {
  release: true;
}

/** The answer to a job, or `ready` once the renderer has loaded. */
export type RenderAnswer = { ready: true } | { id: number; html: string } | { id: number; error: string };

/*
 * One render before announcing ready, through the paths replies take (headings,
 * lists, links, code, tables, something to strip): V8 compiles functions on
 * first call, so otherwise the first reply a fresh worker renders (after a
 * recycle) pays for compiling marked and DOMPurify.
 */
const WARM_UP = "# Title\n\n**bold** _em_ `code` [link](https://example.com) <img src=x onerror=alert(1)>\n\n- one\n- two\n\n1. first\n\n> quote\n\n```\ncode\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";

const port = parentPort!;
const toHtml = await loadHtmlRenderer({ exclusive: true });
toHtml(WARM_UP);
port.on("message", (message: RenderJob | ReleaseMemory) => {
  if ("release" in message) return void collectGarbage();
  const { id, markdown } = message;
  let answer: RenderAnswer;
  try {
    answer = { id, html: toHtml(markdown) };
  } catch (error) {
    answer = { id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(answer);
});
port.postMessage({ ready: true } satisfies RenderAnswer);
