import type { ServerResponse } from "node:http";
import type { H3Event } from "h3";
import type { PendingReply } from "../chat/chat.js";
import { ChatsvcError } from "../core/errors.js";
import { createCallSignal } from "../models/call-signal.js";
import { setAnswerHeader } from "./answer-headers.js";
import { ok, type ErrorEnvelope } from "./envelope.js";

/** True when the client asked for Server-Sent Events. */
export function wantsEventStream(event: H3Event): boolean {
  return /\btext\/event-stream\b/i.test(event.req.headers.get("accept") ?? "");
}

const frame = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

const HEADERS = [
  ["content-type", "text/event-stream; charset=utf-8"],
  ["cache-control", "no-cache, no-transform"],
  // Reverse proxies (nginx) buffer responses by default, which would hold every delta back.
  ["x-accel-buffering", "no"],
] as const;

/** Where a streamed reply's frames go: `close` ends the stream (not called when the client went away). */
interface FrameSink {
  send(text: string): void;
  close(): void;
}

/**
 * Answers a checked send-message request as Server-Sent Events: `delta`
 * events `{text}` while the model writes, then one `done` event carrying the
 * JSON envelope the non-streaming call returns, or one `error` event carrying
 * an error envelope. A client that goes away aborts the model call, and an
 * answer that was complete by then is not stored, so nothing is stored or
 * charged for an answer nobody reads.
 *
 * @example
 * if (wantsEventStream(event)) return streamReply(event, service.chat.prepare(org, slug, id, body));
 */
export function streamReply(event: H3Event, pending: PendingReply): Promise<NodeEventStream> | ReadableStream<Uint8Array> {
  const nodeRes = event.runtime?.node?.res as ServerResponse | undefined;
  if (nodeRes && nodeRes.req?.httpVersion !== "2.0") return streamOverNode(event, nodeRes, pending);
  for (const [name, value] of HEADERS) event.res.headers.set(name, value);
  const encoder = new TextEncoder();
  let abort = () => {};
  return new ReadableStream<Uint8Array>({
    start(stream) {
      abort = answerInto(event, pending, { send: (text) => stream.enqueue(encoder.encode(text)), close: () => stream.close() });
    },
    cancel() {
      abort();
    },
  });
}

/**
 * Over Node the frames are written to the response as they come, without a
 * Web stream and its reader between the model and the socket. h3 gets the
 * stream (and starts the response: its headers, srvx's send) only after the
 * current turn of the event loop: on SQLite, retrieval and the model call
 * run in this turn, so the call goes out first and h3's work runs while the
 * model thinks. Frames written meanwhile wait in the stream.
 */
function streamOverNode(event: H3Event, nodeRes: ServerResponse, pending: PendingReply): Promise<NodeEventStream> {
  for (const [name, value] of HEADERS) setAnswerHeader(event, name, value);
  const body = new NodeEventStream();
  const abort = answerInto(event, pending, body);
  nodeRes.once("close", () => {
    if (!nodeRes.writableFinished) abort();
  });
  return new Promise((resolve) => setImmediate(resolve, body));
}

/** Runs the answer into `sink`; returns what aborts it. */
function answerInto(event: H3Event, pending: PendingReply, sink: FrameSink): () => void {
  // The request's signal too: it fires when the connection closes, even before a byte of the stream was written.
  const call = createCallSignal(event.req.signal);
  const send = (name: string, data: unknown) => {
    if (!call.signal.aborted) sink.send(frame(name, data));
  };
  void (async () => {
    try {
      const { data, meta } = await pending.answer({ signal: call.signal, onDelta: (text) => send("delta", { text }) });
      send("done", ok(data, { meta: { ...meta } }));
    } catch (error) {
      send("error", toStreamError(error));
    } finally {
      call.dispose();
    }
    if (!call.signal.aborted) sink.close();
  })();
  return () => call.abort();
}

/**
 * The event stream as srvx pipes a body with a `pipe` method (its Node path):
 * it writes the head, then hands over the response.
 */
export class NodeEventStream implements FrameSink {
  #res: ServerResponse | undefined;
  #waiting: string[] = [];
  #closed = false;

  send(text: string): void {
    if (this.#res) this.#res.write(text);
    else this.#waiting.push(text);
  }

  close(): void {
    this.#closed = true;
    this.#res?.end();
  }

  pipe(res: ServerResponse): ServerResponse {
    this.#res = res;
    if (this.#closed) res.end(this.#waiting.join(""));
    else if (this.#waiting.length > 0) res.write(this.#waiting.join(""));
    // The head goes out now, while the model thinks: the client sees the answer start, and the first delta is a write of its own.
    else res.flushHeaders();
    this.#waiting = [];
    return res;
  }
}

function toStreamError(error: unknown): ErrorEnvelope {
  if (ChatsvcError.isError(error)) {
    return { success: false, message: error.message, ...(error.errors && { errors: error.errors }), ...error.details };
  }
  console.error("chatsvc: unexpected error while streaming a reply", error);
  return { success: false, message: "Internal server error" };
}
