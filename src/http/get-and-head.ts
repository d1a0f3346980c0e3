import type { H3, H3Event } from "h3";

/**
 * Registers `handler` for GET and for HEAD at `path` (Node leaves the body out
 * of a HEAD answer). HEAD is registered explicitly: h3 falls back from HEAD to
 * GET only when no route matches HEAD, and the catch-all routes of the apps
 * around (the server's 404, a mounting app's) would take it first.
 *
 * @example
 * getAndHead(app, "/widget.js", serveWidgetScript);
 */
export function getAndHead(app: H3, path: string, handler: (event: H3Event) => unknown, options?: Parameters<H3["on"]>[3]): void {
  app.on("GET", path, handler, options);
  app.on("HEAD", path, handler, options);
}
