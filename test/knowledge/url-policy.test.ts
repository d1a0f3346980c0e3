import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { resolveConfig, type ChatServiceOptions } from "../../src/core/config.js";
import { blockedRangeOf } from "../../src/net/address-policy.js";
import { startHarness, type Harness } from "../support/harness.js";
import { startTestServer, streamBody, type StreamedBody, type TestServer } from "./helpers.js";

const BOT = "kb";
const MB = 1024 * 1024;
const OPT_OUT: ChatServiceOptions = { ingest: { allowPrivateNetworks: true } };

let h: Harness | undefined;
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  await h?.close();
  h = undefined;
});

async function start(options: ChatServiceOptions = {}): Promise<Harness> {
  h = await startHarness(options);
  await h.service.chatbots.create({ organization_id: h.tenant.organization.id, slug: BOT, name: "URL policy bot" });
  return h;
}

const page = (body: string) => (_req: unknown, res: import("node:http").ServerResponse) => res.writeHead(200, { "content-type": "text/plain" }).end(body);

// The machine's own name: a plain name (not `localhost`) that resolves, on most hosts, to a loopback or private address.
const ownName = hostname();
const ownAddresses = await lookup(ownName, { family: 4, all: true }).then(
  (found) => found.map((a) => a.address),
  () => [] as string[],
);
const ownNameIsNonPublic = ownAddresses.length > 0 && ownAddresses.every((a) => blockedRangeOf(a) !== null);
const ownNameIsLoopback = ownAddresses.length > 0 && ownAddresses.every((a) => a.startsWith("127."));

describe("URL ingestion address policy", () => {
  it("refuses loopback URLs in any notation by default: nothing is fetched, nothing stored", async () => {
    const h = await start();
    server = await startTestServer(page("Internal admin notes."));
    const urls = [`${server.url}/admin`, `http://2130706433:${server.port}/admin`, `http://localhost:${server.port}/admin`];
    const report = await h.service.knowledge.ingest(BOT, urls);
    expect(report).toMatchObject({ added: 0, chunks: 0 });
    expect(report.failed).toEqual([
      { input: urls[0], error: "refused: 127.0.0.1 is not a public address (loopback)" },
      { input: urls[1], error: "refused: 127.0.0.1 is not a public address (loopback)" },
      { input: urls[2], error: "refused: localhost is a local name" },
    ]);
    expect(server.hits).toBe(0);
    expect(await h.service.knowledge.list(BOT)).toEqual([]);
  });

  it.runIf(ownNameIsNonPublic)("refuses a plain name that resolves to a non-public address, without naming the address", async () => {
    const h = await start();
    server = await startTestServer(page("Internal admin notes."));
    const url = `http://${ownName}:${server.port}/admin`;
    const report = await h.service.knowledge.ingest(BOT, [url]);
    expect(report.failed).toEqual([{ input: url, error: `refused: ${ownName} does not resolve to a public address` }]);
    expect(server.hits).toBe(0);
    expect(await h.service.knowledge.list(BOT)).toEqual([]);
  });

  it("ingests the same URLs with the opt-out", async () => {
    const h = await start(OPT_OUT);
    server = await startTestServer(page("The internal wiki says the office opens at nine."));
    const urls = [`${server.url}/wiki`, ...(ownNameIsLoopback ? [`http://${ownName}:${server.port}/wiki-by-name`] : [])];
    const report = await h.service.knowledge.ingest(BOT, urls);
    expect(report.failed).toEqual([]);
    // The same text under a second URL is a duplicate.
    expect(report).toMatchObject({ added: 1, skipped: urls.length - 1 });
    expect(await (await h.service.knowledge.list(BOT)).map((d) => d.url)).toEqual([`${server.url}/wiki`]);
  });

  it("takes the opt-out from CHATSVC_INGEST_ALLOW_PRIVATE and refuses bad values naming the option", () => {
    expect(resolveConfig({ env: {} }).ingest).toEqual({ allowPrivateNetworks: false, timeoutMs: 15_000, sitemapMaxPages: 1000 });
    expect(resolveConfig({ env: { CHATSVC_INGEST_ALLOW_PRIVATE: "1" } }).ingest.allowPrivateNetworks).toBe(true);
    expect(() => resolveConfig({ env: {}, ingest: { allowPrivateNetworks: "sometimes" as never, timeoutMs: 0 } })).toThrow(
      expect.objectContaining({
        status: 422,
        errors: { "ingest.allowPrivateNetworks": [expect.stringContaining("must be a boolean")], "ingest.timeoutMs": [expect.stringContaining("at least 1")] },
      }),
    );
  });

  it("follows at most 5 redirects, each one checked again", async () => {
    const h = await start(OPT_OUT);
    server = await startTestServer((req, res) => {
      const hops = /^\/r\/(\d+)$/.exec(req.url ?? "");
      if (hops && hops[1] !== "0") res.writeHead(302, { location: `/r/${Number(hops[1]) - 1}` }).end();
      else if (req.url === "/to-ipv6") res.writeHead(301, { location: `http://[::1]:${server!.port}/r/0` }).end();
      else if (req.url === "/to-file") res.writeHead(307, { location: "file:///etc/passwd" }).end();
      else page("Redirected page about parcel lockers.")(req, res);
    });
    const report = await h.service.knowledge.ingest(BOT, [`${server.url}/r/5`, `${server.url}/r/6`, `${server.url}/to-ipv6`, `${server.url}/to-file`]);
    expect(report.failed).toEqual([
      { input: `${server.url}/r/6`, error: "too many redirects (more than 5)" },
      { input: `${server.url}/to-ipv6`, error: "refused redirect: [::1] is an IPv6 address (connections are made over IPv4 only)" },
      { input: `${server.url}/to-file`, error: "refused redirect: the scheme must be http or https (not file:)" },
    ]);
    // The document keeps the URL it was asked for as its source and the final URL as its link.
    expect(await h.service.knowledge.list(BOT)).toMatchObject([{ source: `${server.url}/r/5`, url: `${server.url}/r/0` }]);
  });

  it("cuts a body at the size cap while it streams, so memory stays bounded", async () => {
    const h = await start(OPT_OUT);
    let body: StreamedBody | undefined;
    server = await startTestServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      body = streamBody(res, 100 * MB);
    });
    const base = process.memoryUsage();
    let peak = 0;
    const sampler = setInterval(() => {
      const now = process.memoryUsage();
      peak = Math.max(peak, now.heapUsed - base.heapUsed + (now.arrayBuffers - base.arrayBuffers));
    }, 2);
    const report = await h.service.knowledge.ingest(BOT, [`${server.url}/huge.txt`]).finally(() => clearInterval(sampler));
    expect(report.failed).toEqual([{ input: `${server.url}/huge.txt`, error: `response too large (more than ${20 * MB} bytes)` }]);
    await body!.done;
    expect(body!.finished).toBe(false);
    // The cap is 20 MB; the socket buffers a few MB more before the server notices the close.
    expect(body!.written).toBeLessThan(40 * MB);
    expect(peak).toBeLessThan(60 * MB);
    expect(await h.service.knowledge.list(BOT)).toEqual([]);
  });

  it("refuses a Content-Length over the cap before reading the body", async () => {
    const h = await start(OPT_OUT);
    let body: StreamedBody | undefined;
    server = await startTestServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain", "content-length": String(30 * MB) });
      body = streamBody(res, 30 * MB);
    });
    const report = await h.service.knowledge.ingest(BOT, [`${server.url}/big.txt`]);
    expect(report.failed).toEqual([{ input: `${server.url}/big.txt`, error: `response too large (${30 * MB} bytes; at most ${20 * MB})` }]);
    await body!.done;
    expect(body!.finished).toBe(false);
  });

  it("refuses an unsupported content type from the headers, without downloading the body", async () => {
    const h = await start(OPT_OUT);
    let body: StreamedBody | undefined;
    server = await startTestServer((_req, res) => {
      res.writeHead(200, { "content-type": "image/png" });
      body = streamBody(res, 30 * MB);
    });
    const report = await h.service.knowledge.ingest(BOT, [`${server.url}/picture`]);
    expect(report.failed).toEqual([{ input: `${server.url}/picture`, error: 'unsupported content type "image/png"' }]);
    await body!.done;
    expect(body!.finished).toBe(false);
  });

  it("gives up at the timeout on a server that never answers or never finishes", async () => {
    const h = await start({ ingest: { allowPrivateNetworks: true, timeoutMs: 300 } });
    const trickles = new Set<NodeJS.Timeout>();
    server = await startTestServer((req, res) => {
      if (req.url === "/silent") return;
      res.writeHead(200, { "content-type": "text/plain" });
      const timer = setInterval(() => res.write("."), 50);
      trickles.add(timer);
      res.on("close", () => clearInterval(timer));
    });
    const report = await h.service.knowledge.ingest(BOT, [`${server.url}/silent`, `${server.url}/trickle`]);
    for (const timer of trickles) clearInterval(timer);
    expect(report.failed).toEqual([
      { input: `${server.url}/silent`, error: "no complete answer within 300 ms" },
      { input: `${server.url}/trickle`, error: "no complete answer within 300 ms" },
    ]);
  });
});
