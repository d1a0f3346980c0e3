import { lookup } from "node:dns/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { blockedRangeOf } from "../../src/net/address-policy.js";
import { guardedFetch } from "../../src/net/guarded-fetch.js";

const strict = { allowPrivateNetworks: false };
const open = { allowPrivateNetworks: true };

let server: Server | undefined;
let hits = 0;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
  hits = 0;
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; port: number }> {
  server = createServer((req, res) => {
    hits++;
    handler(req, res);
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port };
}

const ownName = hostname();
const ownAddresses = await lookup(ownName, { family: 4, all: true }).then(
  (found) => found.map((a) => a.address),
  () => [] as string[],
);

describe("guardedFetch", () => {
  it("follows relative redirects and answers the body, headers and final URL", async () => {
    const { url } = await serve((req, res) => {
      if (req.url === "/old") res.writeHead(308, { location: "new?x=1" }).end();
      else res.writeHead(200, { "content-type": "text/plain", "x-seen-ua": req.headers["user-agent"] ?? "" }).end("hello");
    });
    const response = await guardedFetch(`${url}/old`, { policy: open, maxBytes: 100, headers: { "user-agent": "chatsvc-test" } });
    expect(response.url.href).toBe(`${url}/new?x=1`);
    expect(response.status).toBe(200);
    expect(response.headers["x-seen-ua"]).toBe("chatsvc-test");
    expect(response.body.toString()).toBe("hello");
  });

  it("refuses non-public targets under the strict policy before any request is sent", async () => {
    const { port } = await serve((_req, res) => res.end("secret"));
    const refused = [
      [`http://127.0.0.1:${port}/`, "refused: 127.0.0.1 is not a public address (loopback)"],
      ["http://169.254.169.254/latest/meta-data/", "refused: 169.254.169.254 is not a public address (link-local)"],
      [`http://[::1]:${port}/`, "refused: [::1] is an IPv6 address (connections are made over IPv4 only)"],
      ["ftp://example.com/file", "refused: the scheme must be http or https (not ftp:)"],
    ];
    if (ownAddresses.length > 0 && ownAddresses.every((a) => blockedRangeOf(a) !== null)) {
      // A plain name is only resolved at connect time, by the policy's lookup.
      refused.push([`http://${ownName}:${port}/`, `refused: ${ownName} does not resolve to a public address`]);
    }
    for (const [url, message] of refused) {
      await expect(guardedFetch(url!, { policy: strict, maxBytes: 100 })).rejects.toMatchObject({ name: "GuardedFetchError", message });
    }
    expect(hits).toBe(0);
  });

  it("fails clearly on error statuses, bad redirects and bodies cut short", async () => {
    const { url } = await serve((req, res) => {
      if (req.url === "/gone") res.writeHead(410, "Gone").end("gone");
      else if (req.url === "/bad-location") res.writeHead(302, { location: "http://exa mple.com/" }).end();
      else {
        res.writeHead(200, { "content-type": "text/plain", "content-length": "1000" });
        res.write("only the first bytes");
        setTimeout(() => res.destroy(), 20);
      }
    });
    const fetch = (path: string) => guardedFetch(`${url}${path}`, { policy: open, maxBytes: 10_000 });
    await expect(fetch("/gone")).rejects.toThrow("HTTP 410 Gone");
    await expect(fetch("/bad-location")).rejects.toThrow("refused redirect: the Location is not a valid URL");
    await expect(fetch("/short")).rejects.toThrow("the connection closed before the body was complete");
  });

  it("decodes compressed bodies and applies the cap to the decoded size (no decompression bombs)", async () => {
    const text = "Compressed help page. ".repeat(100);
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024));
    const { url } = await serve((req, res) => {
      if (req.url === "/odd") res.writeHead(200, { "content-type": "text/plain", "content-encoding": "constructor" }).end("x");
      else res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" }).end(req.url === "/bomb" ? bomb : gzipSync(text));
    });
    expect((await guardedFetch(`${url}/page`, { policy: open, maxBytes: 10_000 })).body.toString()).toBe(text);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    await expect(guardedFetch(`${url}/bomb`, { policy: open, maxBytes: 1024 * 1024 })).rejects.toThrow("response too large (more than 1048576 bytes)");
    await expect(guardedFetch(`${url}/odd`, { policy: open, maxBytes: 100 })).rejects.toThrow('unsupported content encoding "constructor"');
  });

  it("asks `accept` about the headers before reading the body", async () => {
    const { url } = await serve((_req, res) => res.writeHead(200, { "content-type": "image/png" }).end(Buffer.alloc(10)));
    const seen: string[] = [];
    const accept = ({ url, headers }: { url: URL; headers: Record<string, unknown> }) => {
      seen.push(`${url.pathname} ${String(headers["content-type"])}`);
      return "unsupported content type";
    };
    await expect(guardedFetch(`${url}/logo`, { policy: open, maxBytes: 100, accept })).rejects.toThrow("unsupported content type");
    expect(seen).toEqual(["/logo image/png"]);
  });
});
