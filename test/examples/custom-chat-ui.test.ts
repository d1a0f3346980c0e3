import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, startHarness, type Harness } from "../support/harness.js";
import { startExample, type RunningExample } from "./support/run-example.js";

let h: Harness;
let example: RunningExample;
beforeAll(async () => {
  h = await startHarness();
  example = await startExample("custom-chat-ui/server.mjs", { CHATSVC_URL: h.api, CHATSVC_API_KEY: h.tenant.key.key });
});
afterAll(async () => {
  await example?.stop();
  await h.close();
});

describe("examples/custom-chat-ui", () => {
  it("serves the page and script, which never contain the key", async () => {
    const page = await request(`${example.url}/`);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(page.text).toContain('<script type="module" src="/chat.js">');
    const script = await request(`${example.url}/chat.js`);
    expect(script.text).toContain("textContent = text");
    expect(script.text).toContain("innerHTML = html");
    for (const text of [page.text, script.text]) expect(text).not.toContain(h.tenant.key.key);
  });

  it("runs the chat flow through the backend, passing the reply HTML on unmodified", async () => {
    const config = await request(`${example.url}/chat/config`);
    expect(config.body).toMatchObject({ name: "chatsvc assistant", greeting: expect.stringContaining("Hi!") });
    const { token } = (await request(`${example.url}/chat/start`, { json: {} })).body;
    const sent = await request(`${example.url}/chat/send`, { json: { token, message: "How do I install chatsvc?" } });
    expect(sent.status).toBe(200);
    const conversations = await h.call("/conversations");
    const history = await h.call(`/chatbots/demo/conversations/${conversations.body.data[0].id}`);
    const stored = history.body.data.messages.find((m: { role: string }) => m.role === "assistant");
    expect(sent.body.reply).toBe(stored.content);
    expect(sent.body.reply).toContain('class="svc-branding"');

    const empty = await request(`${example.url}/chat/send`, { json: { token, message: "" } });
    expect(empty.status).toBe(422);
    expect((await request(`${example.url}/chat/send`, { json: { token: "guess", message: "hi" } })).status).toBe(404);
    expect((await request(`${example.url}/chat/end`, { json: { token } })).body).toEqual({ ended: true });
  });
});
