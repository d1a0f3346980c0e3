/** One Server-Sent Event: its name (`message` when unnamed) and its data lines joined. */
export interface ServerSentEvent {
  event: string;
  data: string;
}

// A lone CR at the end of the buffer may be the first half of a CRLF split across chunks: wait for more.
const LINE_END = /\r\n|\n|\r(?=[\s\S])/;

/**
 * Parses a `text/event-stream` body into events, per the HTML standard's
 * rules (CR, LF or CRLF line ends; `:` comments; one optional space after
 * the colon; a blank line dispatches). Cancelling the iteration (e.g.
 * `break`) cancels the body, which closes the connection.
 *
 * @example
 * for await (const { event, data } of readServerSentEvents(response.body)) console.log(event, JSON.parse(data));
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "";
  let data: string[] = [];
  let finished = false;
  const take = (line: string): ServerSentEvent | undefined => {
    if (line === "") {
      const dispatched = data.length > 0 ? { event: event || "message", data: data.join("\n") } : undefined;
      event = "";
      data = [];
      return dispatched;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + (line[colon + 1] === " " ? 2 : 1));
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
    return undefined;
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        // A lone CR the last chunk ended with was a line end after all.
        if (buffer.endsWith("\r")) {
          const dispatched = take(buffer.slice(0, -1));
          if (dispatched) yield dispatched;
        }
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      for (let match = LINE_END.exec(buffer); match; match = LINE_END.exec(buffer)) {
        const line = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        const dispatched = take(line);
        if (dispatched) yield dispatched;
      }
    }
    finished = true;
    // An event is only complete at a blank line: a stream cut mid-event drops it, as browsers do.
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
  }
}
