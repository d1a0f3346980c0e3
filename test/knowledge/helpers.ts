import { createServer, type Server } from "node:http";
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
