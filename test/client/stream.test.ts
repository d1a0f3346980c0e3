import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatsvcError, createClient, readServerSentEvents, type ChatsvcClient, type ReplyStreamEvent } from "../../src/client/index.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fixtures/fake-openai.js";
import { BRANDING, DOCS, ingestDocs, rowCounts } from "../chat/helpers.js";
import { startHarness, type Harness } from "../support/harness.js";

let h: Harness;
let fake: FakeOpenAI;
let client: ChatsvcClient;
const REPLY = "Fake **answer** about Widgetron.";
beforeAll(async () => {
  fake = await startFakeOpenAI({ reply: REPLY });
  h = await startHarness({ chatModel: "openai:fake", openaiBaseUrl: fake.baseUrl, openaiApiKey: "test" });
  await ingestDocs(h.service, "demo", DOCS);
  client = createClient({ baseUrl: h.api, apiKey: h.tenant.key.key, retryDelayMs: 10 });
});
afterAll(async () => {
  await h.close();
  await fake.close();
});

const open = async () => (await client.chatbots.startConversation("demo")).data.conversation_id;

describe("client.chatbots.stream", () => {
  it("yields the text as it is written, then the full answer", async () => {
    fake.behave({ chat: "ok" });
    const events: ReplyStreamEvent[] = [];
    for await (const event of client.chatbots.stream("demo", await open(), "How do I install Widgetron?")) events.push(event);
    const deltas = events.filter((e) => e.type === "delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((e) => e.text).join("")).toBe(REPLY);
    const done = events.at(-1)!;
    expect(done.type).toBe("done");
    if (done.type !== "done") return;
    expect(done.data.reply).toMatch(BRANDING);
    expect(done.meta.this_message).toBe(1);
  });

  it("throws the refusals the service answers before streaming", async () => {
    const id = await open();
    await client.chatbots.end("demo", id);
    const error = await client.chatbots.stream("demo", id, "Hello?").next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatsvcError);
    expect(error).toMatchObject({ status: 400, message: "Conversation has already ended" });
    await expect(client.chatbots.stream("demo", id, "").next()).rejects.toMatchObject({ status: 422, errors: { message: ["The message field is required."] } });
  });

  it("throws an error event as a ChatsvcError carrying the details", async () => {
    const id = await open();
    fake.behave({ chat: "malformed" });
    const seen: ReplyStreamEvent[] = [];
    const failing = (async () => {
      for await (const event of client.chatbots.stream("demo", id, "How do I install Widgetron?")) seen.push(event);
    })();
    await expect(failing).rejects.toMatchObject({ name: "ChatsvcError", status: 500, details: { conversation_id: id } });
    expect(seen.every((e) => e.type === "delta")).toBe(true);
  });

  it("closes the stream when the caller stops reading: nothing is stored or charged", async () => {
    const id = await open();
    fake.behave({ chat: "ok", deltaDelayMs: 50 });
    const before = (await rowCounts(h.service));
    const aborted = fake.aborted;
    for await (const event of client.chatbots.stream("demo", id, "How do I install Widgetron?")) {
      expect(event.type).toBe("delta");
      break;
    }
    await expect.poll(() => fake.aborted, { timeout: 2_000 }).toBe(aborted + 1);
    expect((await rowCounts(h.service))).toEqual(before);
  });
});

describe("readServerSentEvents", () => {
  const streamOf = (...chunks: string[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    });
  const read = async (...chunks: string[]) => {
    const out = [];
    for await (const event of readServerSentEvents(streamOf(...chunks))) out.push(event);
    return out;
  };

  it("parses names, multi-line data, comments and every line ending", async () => {
    expect(await read(": hello\n", "event: delta\ndata: {\"a\":\ndata: 1}\n\n", "data: plain\r\n\r\n", "event: done\rdata: x\r\r")).toEqual([
      { event: "delta", data: '{"a":\n1}' },
      { event: "message", data: "plain" },
      { event: "done", data: "x" },
    ]);
  });

  it("keeps events whole when chunks split lines, CRLFs and multi-byte characters", async () => {
    const euro = new TextEncoder().encode("€");
    const chunks = [new TextEncoder().encode("event: del"), new TextEncoder().encode("ta\r"), new TextEncoder().encode("\ndata: 5"), euro.slice(0, 1), euro.slice(1), new TextEncoder().encode("\r\n\r\n")];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    const out = [];
    for await (const event of readServerSentEvents(body)) out.push(event);
    expect(out).toEqual([{ event: "delta", data: "5€" }]);
  });

  it("drops an event the stream cut off before its blank line", async () => {
    expect(await read("event: delta\ndata: 1\n\n", "event: done\ndata: {")).toEqual([{ event: "delta", data: "1" }]);
  });
});
