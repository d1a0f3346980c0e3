import { describe, expect, it } from "vitest";
import { parseSse, type SseEvent } from "../../src/net/sse.js";

const encoder = new TextEncoder();

async function parse(chunks: string[]): Promise<SseEvent[]> {
  async function* body() {
    for (const chunk of chunks) yield encoder.encode(chunk);
  }
  const events: SseEvent[] = [];
  for await (const event of parseSse(body())) events.push(event);
  return events;
}

/** Every way of cutting `text` in two. */
const splits = (text: string) => Array.from({ length: text.length + 1 }, (_, i) => [text.slice(0, i), text.slice(i)]);

describe("parseSse", () => {
  const stream = ': keep-alive\n\ndata: {"a":1}\n\nevent: error\ndata: line one\ndata: line two\n\ndata:[DONE]\n\n';
  const expected: SseEvent[] = [
    { event: "message", data: '{"a":1}' },
    { event: "error", data: "line one\nline two" },
    { event: "message", data: "[DONE]" },
  ];

  it("reads data lines, named events, multi-line data and skips comments", async () => {
    expect(await parse([stream])).toEqual(expected);
  });

  it("gives the same events wherever the bytes are split", async () => {
    for (const chunks of splits(stream)) expect(await parse(chunks)).toEqual(expected);
  });

  it("accepts \\r\\n and \\r line ends, also when a \\r\\n is split across chunks", async () => {
    const crlf = stream.replace(/\n/g, "\r\n");
    for (const chunks of splits(crlf)) expect(await parse(chunks)).toEqual(expected);
    expect(await parse([stream.replace(/\n/g, "\r")])).toEqual(expected);
  });

  it("keeps multi-byte characters split between chunks intact", async () => {
    const bytes = encoder.encode("data: grüße 👋\n\n");
    async function* body() {
      for (const byte of bytes) yield new Uint8Array([byte]);
    }
    const events: SseEvent[] = [];
    for await (const event of parseSse(body())) events.push(event);
    expect(events).toEqual([{ event: "message", data: "grüße 👋" }]);
  });

  it("delivers a last event whose blank line is missing", async () => {
    expect(await parse(["data: a\n\ndata: [DONE]"])).toEqual([
      { event: "message", data: "a" },
      { event: "message", data: "[DONE]" },
    ]);
  });

  it("refuses an endless line instead of buffering it", async () => {
    await expect(parse(["data: ", "x".repeat(1_100_000)])).rejects.toThrow(/longer than/);
  });
});
