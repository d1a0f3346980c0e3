import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { whenQuiet } from "../../src/http/when-quiet.js";
import { startHarness, type Harness } from "../support/harness.js";

// What a quiet `chatsvc serve` does: gives back memory it can do without, and keeps what a reply needs loaded.

describe("a quiet service releasing memory (SQLite)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ renderWorker: true });
  });
  afterAll(() => h.close());

  const reply = async () => {
    const opened = await h.call("/chatbots/demo/conversations", { json: {} });
    const res = await h.call(`/chatbots/demo/conversations/${opened.body.data.conversation_id}/messages`, { json: { message: "How do I verify webhook signatures?" } });
    expect(res.status).toBe(200);
    return res.body.data.reply as string;
  };
  // A mapped file's touched pages would count in this process's RSS.
  const mapped = () => readFileSync("/proc/self/maps", "utf8").split("\n").some((line) => line.endsWith(` ${h.dbFile}`));

  it("never maps the database file and keeps the render worker: the next replies are the same, rendered as HTML", async () => {
    const before = await reply();
    // Sanitised HTML from the worker, not the escaped text a failed render becomes.
    expect(before).toMatch(/<(p|ul|ol|h\d|pre)>[\s\S]*<(strong|code|a|li|em)\b/);
    expect(mapped(), "the database is memory-mapped while serving").toBe(false);

    h.service.releaseMemory();

    expect(await reply()).toBe(before);
    h.service.releaseMemory();
    h.service.releaseMemory();
    expect(await reply()).toBe(before);
  });
});

describe("whenQuiet", () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end("ok"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  afterEach(() => vi.useRealTimers());

  it("calls once per quiet spell: not while requests keep coming, again only after they resumed and stopped", async () => {
    // Only the interval is simulated: the requests are real.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    let calls = 0;
    const stop = whenQuiet(server, 1_000, () => calls++);
    try {
      for (let i = 0; i < 8; i++) {
        await fetch(url).then((r) => r.text());
        vi.advanceTimersByTime(400);
      }
      expect(calls, "called while requests kept coming").toBe(0);
      vi.advanceTimersByTime(1_500);
      expect(calls).toBe(1);
      vi.advanceTimersByTime(10_000);
      expect(calls, "called twice in one quiet spell").toBe(1);
      await fetch(url).then((r) => r.text());
      vi.advanceTimersByTime(1_500);
      expect(calls).toBe(2);
    } finally {
      stop();
    }
    await fetch(url).then((r) => r.text());
    vi.advanceTimersByTime(5_000);
    expect(calls, "called after it was stopped").toBe(2);
  });
});
