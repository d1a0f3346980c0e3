import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from "node:http";
import type { H3Event } from "h3";

/**
 * The Node response `startServer` uses: headers every answer carries are
 * kept as a list and join the answer's own in its `writeHead`. Set with
 * `setHeader`, they made Node re-set every header h3 passes to `writeHead`
 * (its slow path, validating each twice) on every request. A header the
 * answer sets itself wins, as it did over `setHeader`.
 */
export class AnswerResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** Name, value, name, value... */
  answerHeaders: string[] | undefined;

  override writeHead(statusCode: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    const extra = this.answerHeaders;
    if (extra === undefined) return super.writeHead(statusCode, reason as string, headers);
    this.answerHeaders = undefined;
    const given = typeof reason === "string" ? headers : reason;
    // h3 (through srvx) passes a flat [name, value, ...] list with lower-case names.
    if (Array.isArray(given) && (given.length === 0 || typeof given[0] === "string")) {
      const merged = given.slice() as string[];
      for (let i = 0; i < extra.length; i += 2) if (!hasName(given as string[], extra[i]!)) merged.push(extra[i]!, extra[i + 1]!);
      return typeof reason === "string" ? super.writeHead(statusCode, reason, merged) : super.writeHead(statusCode, merged);
    }
    for (let i = 0; i < extra.length; i += 2) if (!this.hasHeader(extra[i]!)) this.setHeader(extra[i]!, extra[i + 1]!);
    return super.writeHead(statusCode, reason as string, headers);
  }

  // srvx ends every answer once h3 is done with it, also one the request pipeline
  // sent itself (`sendJson`): on a finished response Node builds an
  // ERR_STREAM_ALREADY_FINISHED error, stack and all, for a callback that ignores it.
  override end(callback?: () => void): this;
  override end(chunk: unknown, callback?: () => void): this;
  override end(chunk: unknown, encoding: BufferEncoding, callback?: () => void): this;
  override end(...args: unknown[]): this {
    const [callback] = args;
    if (args.length === 1 && typeof callback === "function" && this.writableFinished) {
      (callback as () => void)();
      return this;
    }
    return super.end(...(args as [unknown, BufferEncoding, () => void]));
  }
}

function hasName(flat: readonly string[], name: string): boolean {
  for (let i = 0; i < flat.length; i += 2) if (flat[i] === name) return true;
  return false;
}

/**
 * Sets a header that every answer to the request carries, error answers included.
 * Over Node it goes to the Node response, which sends it with whatever h3
 * answers: on h3's own response headers it would cost a Web `Headers` object,
 * merged into the answer's, per request (more than a cheap route itself). On other
 * runtimes it goes on h3's response headers and on those h3 keeps for errors.
 *
 * @example
 * setAnswerHeader(event, "x-request-id", id);
 */
export function setAnswerHeader(event: H3Event, name: string, value: string): void {
  const nodeRes = event.runtime?.node?.res;
  if (nodeRes) {
    if (nodeRes.headersSent) return;
    if (nodeRes instanceof AnswerResponse) setListed(nodeRes, name, value);
    else nodeRes.setHeader(name, value);
    return;
  }
  event.res.headers.set(name, value);
  event.res.errHeaders.set(name, value);
}

function setListed(nodeRes: AnswerResponse, name: string, value: string): void {
  const list = (nodeRes.answerHeaders ??= []);
  for (let i = 0; i < list.length; i += 2) {
    if (list[i] === name) {
      list[i + 1] = value;
      return;
    }
  }
  list.push(name, value);
}
