import type { H3Event } from "h3";
import type { PendingReply } from "../chat/chat.js";
import { ChatsvcError } from "../core/errors.js";
import { createCallSignal } from "../models/call-signal.js";
import { ok, type ErrorEnvelope } from "./envelope.js";

/** True when the client asked for Server-Sent Events. */
export function wantsEventStream(event: H3Event): boolean {
  return /\btext\/event-stream\b/i.test(event.req.headers.get("accept") ?? "");
}

const frame = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

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
export function streamReply(event: H3Event, pending: PendingReply): ReadableStream<Uint8Array> {
  // The request's signal too: it fires when the connection closes, even before a byte of the stream was written.
  const call = createCallSignal(event.req.signal);
  const encoder = new TextEncoder();
  event.res.headers.set("content-type", "text/event-stream; charset=utf-8");
  event.res.headers.set("cache-control", "no-cache, no-transform");
  // Reverse proxies (nginx) buffer responses by default, which would hold every delta back.
  event.res.headers.set("x-accel-buffering", "no");
  return new ReadableStream<Uint8Array>({
    async start(stream) {
      const send = (name: string, data: unknown) => {
        if (!call.signal.aborted) stream.enqueue(encoder.encode(frame(name, data)));
      };
      try {
        const { data, meta } = await pending.answer({ signal: call.signal, onDelta: (text) => send("delta", { text }) });
        send("done", ok(data, { meta: { ...meta } }));
      } catch (error) {
        send("error", toStreamError(error));
      } finally {
        call.dispose();
      }
      if (!call.signal.aborted) stream.close();
    },
    cancel() {
      call.abort();
    },
  });
}

function toStreamError(error: unknown): ErrorEnvelope {
  if (ChatsvcError.isError(error)) {
    return { success: false, message: error.message, ...(error.errors && { errors: error.errors }), ...error.details };
  }
  console.error("chatsvc: unexpected error while streaming a reply", error);
  return { success: false, message: "Internal server error" };
}
