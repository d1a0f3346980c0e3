import type { H3Event } from "h3";

/**
 * Sets a header that every answer to the request carries, error answers included.
 * Over Node it goes straight onto the Node response, which sends it with whatever
 * h3 answers: on h3's own response headers it would cost a Web `Headers` object,
 * merged into the answer's, per request (more than a cheap route itself). On other
 * runtimes it goes on h3's response headers and on those h3 keeps for errors.
 *
 * @example
 * setAnswerHeader(event, "x-request-id", id);
 */
export function setAnswerHeader(event: H3Event, name: string, value: string): void {
  const nodeRes = event.runtime?.node?.res;
  if (nodeRes) {
    if (!nodeRes.headersSent) nodeRes.setHeader(name, value);
    return;
  }
  event.res.headers.set(name, value);
  event.res.errHeaders.set(name, value);
}
