import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A one-page PDF with one text line per entry (Helvetica), valid enough for PDF.js. */
export function makePdf(lines: string[]): Buffer {
  const stream = lines.map((l, i) => `BT /F1 12 Tf 72 ${720 - i * 16} Td (${l.replace(/[()\\]/g, "\\$&")}) Tj ET`).join("\n");
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${Buffer.byteLength(stream)} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out);
}

export interface PageServer {
  url: string;
  /** Replace or add a page: path -> [content type, body]. */
  pages: Map<string, [string, string | Buffer]>;
  close(): Promise<void>;
}

/** Serves fixed pages on 127.0.0.1; unknown paths are 404. */
export async function startPageServer(pages: Record<string, [string, string | Buffer]>): Promise<PageServer> {
  const map = new Map(Object.entries(pages));
  const server: Server = createServer((req, res) => {
    const page = map.get(req.url ?? "/");
    if (!page) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": page[0] }).end(page[1]);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    pages: map,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface TestServer {
  url: string;
  port: number;
  /** Requests received so far. */
  hits: number;
  close(): Promise<void>;
}

/** A node:http server on 127.0.0.1 answering with `handler`; `close()` also drops open connections. */
export async function startTestServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestServer> {
  const server: Server = createServer((req, res) => {
    result.hits++;
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const result: TestServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    hits: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return result;
}

/** What a streamed body came to: bytes handed to the socket, and whether all of it was sent. */
export interface StreamedBody {
  written: number;
  finished: boolean;
  /** Resolves when the response is over, sent in full or cut by the client. */
  done: Promise<void>;
}

/** Streams `total` bytes of `fill` in 64 KiB chunks, waiting for the socket to drain (so the server itself buffers little). */
export function streamBody(res: ServerResponse, total: number, fill = "a"): StreamedBody {
  const chunk = Buffer.alloc(64 * 1024, fill);
  const state: StreamedBody = { written: 0, finished: false, done: Promise.resolve() };
  state.done = new Promise<void>((resolve) => {
    res.on("close", () => {
      state.finished = res.writableFinished;
      resolve();
    });
  });
  const pump = () => {
    while (state.written < total && !res.destroyed) {
      const part = chunk.subarray(0, Math.min(chunk.length, total - state.written));
      state.written += part.length;
      if (!res.write(part)) {
        res.once("drain", pump);
        return;
      }
    }
    if (!res.destroyed) res.end();
  };
  pump();
  return state;
}
