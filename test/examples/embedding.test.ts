import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { request, tempDir } from "../support/harness.js";
import { startExample, type RunningExample } from "./support/run-example.js";

let example: RunningExample | undefined;
let cleanup: (() => void) | undefined;
afterEach(async () => {
  await example?.stop();
  cleanup?.();
  example = cleanup = undefined;
});

describe.each(["embed-h3/server.mjs", "embed-node-http/server.mjs"])("examples/%s", (file) => {
  it("serves the app's own routes and the chat API under /api/v1, with the key it printed on first run", async () => {
    const tmp = tempDir();
    cleanup = tmp.cleanup;
    example = await startExample(file, { CHATSVC_DB: join(tmp.dir, "chatsvc.db") });
    const key = /sk_live_\w{32}/.exec(example.output())![0];

    expect((await request(`${example.url}/`)).status).toBe(200);
    const auth = await request(`${example.url}/api/v1/auth/test`, { key });
    expect(auth.status).toBe(200);
    expect(auth.body.message).toBe("Authentication successful");
    const started = await request(`${example.url}/api/v1/chatbots/demo/conversations`, { key, json: {} });
    const reply = await request(`${example.url}/api/v1/chatbots/demo/conversations/${started.body.data.conversation_id}/messages`, {
      key,
      json: { message: "How do I create an API key?" },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.data.cannot_answer).toBe(false);
    expect(reply.body.data.reply).toContain('class="svc-branding"');
  });
});
