/** One Server-Sent Event: its `event` name (`message` when unnamed) and its data lines joined by `\n`. */
export interface SseEvent {
  event: string;
  data: string;
}

/** A line longer than this is not an event stream (or a broken one); stop instead of buffering without end. */
const MAX_LINE_CHARS = 1_000_000;

export interface ParseSseOptions {
  /**
   * Deliver an event still pending when the stream ends (default true: some
   * model servers omit the last blank line). False drops it, as browsers do,
   * so a reader can tell a stream that was cut mid-event.
   */
  keepUnterminated?: boolean;
}

/**
 * Parses a Server-Sent Events byte stream (WHATWG rules: `\r\n`, `\n` or `\r`
 * line ends, `:` comments, multi-line `data:`, a blank line ends an event),
 * whatever way the bytes are split into chunks. Leaving the loop early cancels
 * the stream, which closes the connection.
 *
 * @example
 * for await (const { data } of parseSse(response.body)) {
 *   if (data === "[DONE]") break;
 *   console.log(JSON.parse(data));
 * }
 */
export async function* parseSse(
  body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>,
  { keepUnterminated = true }: ParseSseOptions = {},
): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "";
  let data: string[] = [];

  const take = (line: string): SseEvent | undefined => {
    if (line === "") {
      const done = data.length > 0 ? { event: event || "message", data: data.join("\n") } : undefined;
      event = "";
      data = [];
      return done;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(line[colon + 1] === " " ? colon + 2 : colon + 1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    return undefined;
  };

  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    // A trailing `\r` may be the first half of `\r\n`: keep it until the next chunk shows.
    const lines = buffer.split(/\r\n|\r(?!$)|\n/);
    buffer = lines.pop()!;
    if (buffer.length > MAX_LINE_CHARS) throw new SyntaxError(`Event stream line longer than ${MAX_LINE_CHARS} characters`);
    for (const line of lines) {
      const ready = take(line);
      if (ready) yield ready;
    }
  }
  buffer += decoder.decode();
  // Here a trailing `\r` was a line end after all; what follows the last line end is unterminated.
  const lines = buffer.split(/\r\n|\r|\n/);
  const unterminated = lines.pop()!;
  if (keepUnterminated) lines.push(unterminated, "");
  for (const line of lines) {
    const ready = take(line);
    if (ready) yield ready;
  }
}
