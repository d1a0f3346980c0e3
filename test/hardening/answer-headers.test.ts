// The headers every answer carries (request id, rate limits) join the answer's own in writeHead, however it is called.
import { createServer, get, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AnswerResponse } from "../../src/http/answer-headers.js";

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

async function answer(respond: (res: AnswerResponse) => void): Promise<{ status: number; raw: string[]; headers: IncomingHttpHeaders }> {
  server = createServer({ ServerResponse: AnswerResponse }, (_req, res) => respond(res as AnswerResponse));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    get({ port, host: "127.0.0.1", path: "/" }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode!, raw: res.rawHeaders, headers: res.headers }));
    }).on("error", reject);
  });
}

const count = (raw: string[], name: string) => raw.filter((v, i) => i % 2 === 0 && v.toLowerCase() === name).length;

describe("AnswerResponse", () => {
  it("adds the listed headers to a flat list (h3's form); a header the answer sets itself wins, once", async () => {
    const got = await answer((res) => {
      res.answerHeaders = ["x-request-id", "abc", "x-ratelimit-remaining", "5"];
      res.writeHead(429, "", ["content-type", "application/json", "x-ratelimit-remaining", "0"]);
      res.end("{}");
    });
    expect(got.status).toBe(429);
    expect(got.headers["x-request-id"]).toBe("abc");
    expect(got.headers["x-ratelimit-remaining"]).toBe("0");
    expect(count(got.raw, "x-ratelimit-remaining")).toBe(1);
  });

  it("adds them with headers as an object, without headers, and when Node writes them implicitly", async () => {
    const asObject = await answer((res) => {
      res.answerHeaders = ["x-request-id", "one", "x-a", "listed"];
      res.writeHead(201, { "x-a": "own" });
      res.end();
    });
    expect(asObject).toMatchObject({ status: 201, headers: { "x-request-id": "one", "x-a": "own" } });
    const bare = await answer((res) => {
      res.answerHeaders = ["x-request-id", "two"];
      res.writeHead(204);
      res.end();
    });
    expect(bare).toMatchObject({ status: 204, headers: { "x-request-id": "two" } });
    const implicit = await answer((res) => {
      res.answerHeaders = ["x-request-id", "three"];
      res.statusCode = 500;
      res.end();
    });
    expect(implicit).toMatchObject({ status: 500, headers: { "x-request-id": "three" } });
  });

  it("calls back at once, without an error, when ended again after the answer went out (srvx after a direct answer)", async () => {
    let late: unknown[] | undefined;
    await answer((res) => {
      res.end("{}", () => res.end((...args: unknown[]) => (late = args)));
    });
    expect(late).toEqual([]);
  });
});
