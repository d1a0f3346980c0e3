import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { signWebhook } from "../../src/index.js";
import { request, startHarness, type Harness } from "../support/harness.js";
import { startExample, type RunningExample } from "./support/run-example.js";

let h: Harness | undefined;
let example: RunningExample | undefined;
afterEach(async () => {
  await example?.stop();
  await h?.close();
  example = h = undefined;
});

/** A free port: the webhook must be registered (for its secret) before the receiver starts. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

describe("examples/webhook-receiver", () => {
  it("accepts signed deliveries from chatsvc and refuses forged ones", async () => {
    h = await startHarness({ webhooks: { allowPrivateNetworks: true } });
    const port = await freePort();
    const registered = await h.call("/webhooks", { json: { url: `http://127.0.0.1:${port}/`, events: ["lead_captured"] } });
    const secret = registered.body.data.secret as string;
    example = await startExample("webhook-receiver/server.mjs", { PORT: String(port), WEBHOOK_SECRET: secret });

    const conversation = (await h.call("/chatbots/demo/conversations", { json: {} })).body.data.conversation_id;
    await h.call(`/chatbots/demo/conversations/${conversation}/leads`, { json: { email: "ana@example.com" } });
    const [line] = await example.waitFor(/lead_captured \S+ (\{.*\})/);
    expect(line).toContain('"email":"ana@example.com"');

    const body = JSON.stringify({ event: "lead_captured", data: { id: 1 } });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = { "content-type": "application/json", "webhook-id": "msg_forged", "webhook-timestamp": String(timestamp) };
    const forged = await request(example.url, { method: "POST", body, headers: { ...headers, "webhook-signature": signWebhook("whsec_" + Buffer.alloc(32).toString("base64"), "msg_forged", timestamp, body) } });
    expect(forged.status).toBe(401);
    const genuine = await request(example.url, { method: "POST", body, headers: { ...headers, "webhook-signature": signWebhook(secret, "msg_forged", timestamp, body) } });
    expect(genuine.status).toBe(204);
  });

  it("refuses to start without the secret", async () => {
    await expect(startExample("webhook-receiver/server.mjs")).rejects.toThrow(/Set WEBHOOK_SECRET/);
  });
});
