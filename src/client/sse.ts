import { parseSse, type SseEvent } from "../net/sse.js";

/** One Server-Sent Event: its name (`message` when unnamed) and its data lines joined. */
export type ServerSentEvent = SseEvent;

/**
 * Parses a `text/event-stream` body into events, per the HTML standard's
 * rules. An event is only complete at a blank line: a stream cut mid-event
 * drops it, as browsers do. Cancelling the iteration (e.g. `break`) cancels
 * the body, which closes the connection.
 *
 * @example
 * for await (const { event, data } of readServerSentEvents(response.body)) console.log(event, JSON.parse(data));
 */
export function readServerSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  return parseSse(body, { keepUnterminated: false });
}
