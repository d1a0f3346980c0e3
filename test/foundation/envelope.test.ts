import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, startHarness, type Harness } from "../support/harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** Every error answer is the envelope: success false, a message, nothing else but `errors` on 422. */
function expectErrorEnvelope(body: any, status: number) {
  expect(body.success).toBe(false);
  expect(typeof body.message).toBe("string");
  expect(body.message.length).toBeGreaterThan(0);
  if (status === 422) expect(body.errors).toEqual(expect.any(Object));
  else expect(body.errors).toBeUndefined();
}

const open = "/chatbots/demo/conversations";

describe("the error envelope", () => {
  it("400 for invalid JSON", async () => {
    const res = await h.call(open, { method: "POST", body: "{not json", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expectErrorEnvelope(res.body, 400);
    expect(res.body.message).toBe("Invalid JSON body");
  });

  it("415 for a body sent as anything but JSON, before anything is stored; JSON types with parameters and +json pass", async () => {
    const before = (await h.call("/conversations")).body.meta.total;
    for (const type of ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x", "application/jsonp"]) {
      const res = await h.call(open, { method: "POST", body: '{"visitor_id":"v"}', headers: { "content-type": type } });
      expect(res.status, type).toBe(415);
      expectErrorEnvelope(res.body, 415);
      expect(res.body.message).toBe("Unsupported Content-Type: send the body as application/json");
    }
    expect((await h.call("/conversations")).body.meta.total).toBe(before);
    for (const type of ["application/json; charset=utf-8", "APPLICATION/JSON", "application/merge-patch+json"]) {
      const res = await h.call(open, { method: "POST", body: '{"visitor_id":"v"}', headers: { "content-type": type } });
      expect(res.status, type).toBe(201);
    }
    // `curl -X POST` sends no body; a form type on an empty body names nothing wrong.
    const empty = await h.call(open, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "content-length": "0" } });
    expect(empty.status).toBe(201);
  });

  it("401 without a key", async () => {
    const res = await h.call(open, { key: null, json: {} });
    expect(res.status).toBe(401);
    expectErrorEnvelope(res.body, 401);
  });

  it("403 for an unknown chatbot", async () => {
    const res = await h.call("/chatbots/nope/conversations", { json: {} });
    expect(res.status).toBe(403);
    expectErrorEnvelope(res.body, 403);
  });

  it("404 for an unknown route, with or without a key", async () => {
    for (const key of [undefined, null]) {
      const res = await h.call("/does/not/exist", { key });
      expect(res.status).toBe(404);
      expectErrorEnvelope(res.body, 404);
    }
  });

  it("400 for a malformed URL, which h3 rejects before any route", async () => {
    const res = await request(`${h.server.url}/api/v1/%ZZ`);
    expect(res.status).toBe(400);
    expectErrorEnvelope(res.body, 400);
  });

  it("413 for a body over 1 MB, whether Content-Length is declared or the body is streamed", async () => {
    const big = JSON.stringify({ visitor_name: "x".repeat(1_100_000) });
    const declared = await h.call(open, { method: "POST", body: big, headers: { "content-type": "application/json" } });
    expect(declared.status).toBe(413);
    expectErrorEnvelope(declared.body, 413);

    const chunks = [new TextEncoder().encode(big)];
    const stream = new ReadableStream({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const streamed = await h.call(open, { method: "POST", body: stream, headers: { "content-type": "application/json" }, duplex: "half" } as RequestInit);
    expect(streamed.status).toBe(413);
    expectErrorEnvelope(streamed.body, 413);
  });

  it("422 naming each bad field, wrong types included; a non-object body is a 422 on body", async () => {
    const res = await h.call(open, { json: { visitor_id: 42, metadata: "nope", visitor_email: "not-an-email" } });
    expect(res.status).toBe(422);
    expectErrorEnvelope(res.body, 422);
    expect(Object.keys(res.body.errors).sort()).toEqual(["metadata", "visitor_email", "visitor_id"]);
    const arr = await h.call(open, { json: [1, 2] });
    expect(arr.status).toBe(422);
    expect(Object.keys(arr.body.errors)).toEqual(["body"]);
  });

  it("422 on body for JSON nested deeper than 32 levels or with more than 10,000 fields, before any handler", async () => {
    let deep: unknown = "x";
    for (let i = 0; i < 33; i++) deep = { a: deep };
    const tooDeep = await h.call(open, { json: { metadata: deep } });
    expect(tooDeep.status).toBe(422);
    expect(tooDeep.body.errors.body[0]).toContain("nested deeper than 32");

    const wide = await h.call(open, { json: { metadata: Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`k${i}`, 1])) } });
    expect(wide.status).toBe(422);
    expect(wide.body.errors.body[0]).toContain("more than 10000 fields");

    const list = await h.call(open, { json: { metadata: { list: new Array(20_000).fill(0) } } });
    expect(list.status).toBe(422);

    let fine: unknown = "x";
    for (let i = 0; i < 30; i++) fine = { a: fine };
    expect((await h.call(open, { json: { metadata: fine } })).status).toBe(201);
  });
});
