import type { H3Event } from "h3";
import type { Export } from "../core/exports.js";

/**
 * Answers an export as a streamed file. The body is pulled: the next page is
 * read from the database only when the client has taken the previous one
 * (srvx writes the next chunk after the socket drains), so a slow client
 * holds back the reads instead of filling memory. A client that goes away
 * cancels the stream and the reads stop. A database failure mid-way aborts
 * the response, so a truncated file never looks complete.
 *
 * @example
 * return streamExport(event, await service.exports.conversations(org, { format: "csv" }));
 */
export function streamExport(event: H3Event, exported: Export): ReadableStream<Uint8Array> {
  event.res.headers.set("content-type", exported.contentType);
  event.res.headers.set("content-disposition", `attachment; filename="${exported.filename}"`);
  event.res.headers.set("cache-control", "no-store");
  event.res.headers.set("x-accel-buffering", "no");
  const pages = exported.chunks()[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { value, done } = await pages.next();
          if (done) controller.close();
          else controller.enqueue(encoder.encode(value));
        } catch (error) {
          console.error("chatsvc: export failed while streaming", error);
          controller.error(error);
        }
      },
      async cancel() {
        await pages.return?.();
      },
    },
    // One chunk (a page) queued ahead of the client at most.
    { highWaterMark: 1 },
  );
}
