/** A Server-Sent Events frame with its JSON data parsed. */
export interface SseFrame {
  event: string;
  data: any;
}

/** Parses a whole `text/event-stream` body (as the server writes it: `event:` and `data:` lines, blank-line separated) into frames. */
export function parseSseText(text: string): SseFrame[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      return {
        event: lines.find((l) => l.startsWith("event: "))!.slice(7),
        data: JSON.parse(lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n")),
      };
    });
}
