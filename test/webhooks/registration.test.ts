import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { createProgram } from "../../src/cli/program.js";
import { blockedRangeOf } from "../../src/net/address-policy.js";
import { addTenant, sharedHarness, startHarness, type Harness } from "../support/harness.js";
import { sqlOf } from "../support/sql.js";
import { verifyWebhook } from "../../src/index.js";
import { startReceiver } from "./support/receiver.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  // The refusals below use a shared harness and set none of their own: never close this one twice.
  h = undefined!;
});

// The machine's own name: a plain name (not `localhost`) that resolves, on most hosts, to a loopback or private address.
const ownName = hostname();
const ownAddresses = await lookup(ownName, { family: 4, all: true }).then(
  (found) => found.map((a) => a.address),
  () => [] as string[],
);

const ALLOW_HINT =
  "To deliver webhooks to private or local addresses, start the server with --allow-private-webhooks or CHATSVC_WEBHOOKS_ALLOW_PRIVATE=1 (library option webhooks.allowPrivateNetworks).";

const hook = { url: "https://hooks.example.com/chatsvc", events: ["lead_captured", "conversation_started"], name: "CRM" };

describe("POST /webhooks", () => {
  it("creates a webhook (201) and shows its secret once", async () => {
    h = await startHarness();
    const res = await h.call("/webhooks", { json: hook });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      message: "Webhook registered successfully",
      data: { id: expect.any(Number), name: "CRM", url: hook.url, events: hook.events, is_active: true, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) },
    });
    const listed = await h.call("/webhooks");
    expect(JSON.stringify(listed.body)).not.toContain("whsec_");
  });

  it("the same URL updates the webhook (200, no secret) instead of duplicating it, and the name defaults to the host", async () => {
    h = await startHarness();
    const first = await h.call("/webhooks", { json: { url: hook.url, events: ["lead_captured"] } });
    expect(first.body.data.name).toBe("hooks.example.com");
    const again = await h.call("/webhooks", { json: { url: hook.url, events: ["message_received", "conversation_ended"], name: "Renamed" } });
    expect(again.status).toBe(200);
    expect(again.body.message).toBe("Webhook registered successfully");
    expect(again.body.data).toEqual({ id: first.body.data.id, name: "Renamed", url: hook.url, events: ["conversation_ended", "message_received"], is_active: true });
    const list = await h.call("/webhooks");
    expect(list.body.data).toHaveLength(1);
  });

  it("another organisation registering the same URL gets its own webhook", async () => {
    h = await startHarness();
    const other = await addTenant(h.service);
    await h.call("/webhooks", { json: hook });
    const theirs = await h.call("/webhooks", { json: hook, key: other.key.key });
    expect(theirs.status).toBe(201);
    expect((await h.call("/webhooks")).body.data).toHaveLength(1);
    expect((await h.call("/webhooks", { key: other.key.key })).body.data).toHaveLength(1);
  });

  // Refused registrations store nothing, so they share one service; each 422 still checks the list stayed empty.
  describe("refusals", () => {
    const refusing = sharedHarness();

    it.each([
      ["no body", undefined, "body"],
      ["no url", { events: ["lead_captured"] }, "url"],
      ["a url that is not a URL", { url: "not a url", events: ["lead_captured"] }, "url"],
      ["a non-http scheme", { url: "ftp://example.com/x", events: ["lead_captured"] }, "url"],
      ["a url of the wrong type", { url: 42, events: ["lead_captured"] }, "url"],
      ["no events", { url: hook.url }, "events"],
      ["empty events", { url: hook.url, events: [] }, "events"],
      ["an unknown event", { url: hook.url, events: ["lead_captured", "order_paid"] }, "events.1"],
      ["events that are not a list", { url: hook.url, events: "lead_captured" }, "events"],
      ["an empty name", { ...hook, name: "  " }, "name"],
    ])("422 for %s", async (_, json, field) => {
      const h = refusing();
      const res = await h.call("/webhooks", json === undefined ? { method: "POST" } : { json });
      expect(res.status).toBe(422);
      expect(res.body.success).toBe(false);
      expect(res.body.errors[field]).toEqual([expect.any(String)]);
      expect((await h.call("/webhooks")).body.data).toEqual([]);
    });

    it.each([
      "http://127.0.0.1:8080/hook",
      "http://2130706433/",
      "http://0x7f.0.0.1/",
      "http://10.0.0.8/",
      "http://169.254.169.254/latest/meta-data/",
      "http://192.168.1.20/hook",
      "http://100.64.0.9/",
      "http://[::1]/hook",
      "http://localhost:3000/hook",
    ])("refuses %s by default (422 on url)", async (url) => {
      const h = refusing();
      const res = await h.call("/webhooks", { json: { url, events: ["lead_captured"] } });
      expect(res.status).toBe(422);
      expect(res.body.errors.url).toEqual([expect.stringMatching(/not allowed|IPv4 only/)]);
    });

    it.runIf(ownAddresses.length > 0 && ownAddresses.every((a) => blockedRangeOf(a) !== null))(
      "refuses a name that resolves to a non-public address without naming the address",
      async () => {
        const h = refusing();
        const res = await h.call("/webhooks", { json: { url: `http://${ownName}:8080/hook`, events: ["lead_captured"] } });
        expect(res.status).toBe(422);
        expect(res.body.errors.url).toEqual([`The url is not allowed: ${ownName} does not resolve to a public address. ${ALLOW_HINT}`]);
        for (const address of ownAddresses) expect(res.text).not.toContain(address);
      },
    );

    it.each([
      ["http://10.0.0.8/", "The url is not allowed: 10.0.0.8 is not a public address (private)."],
      ["http://localhost:3000/hook", "The url is not allowed: localhost is a local name."],
    ])("the refusal of %s says how to allow private addresses", async (url, reason) => {
      const h = refusing();
      const res = await h.call("/webhooks", { json: { url, events: ["lead_captured"] } });
      expect(res.body.errors.url).toEqual([`${reason} ${ALLOW_HINT}`]);
    });

    it("a refusal that allowing private addresses would not lift gives no such hint", async () => {
      const h = refusing();
      for (const url of ["http://[::1]/hook", "ftp://example.com/x"]) {
        const res = await h.call("/webhooks", { json: { url, events: ["lead_captured"] } });
        expect(res.body.errors.url).toEqual([expect.not.stringContaining("allow-private-webhooks")]);
      }
    });
  });

  it("accepts private addresses when the service allows private networks", async () => {
    h = await startHarness({ webhooks: { allowPrivateNetworks: true } });
    expect((await h.call("/webhooks", { json: { url: "http://127.0.0.1:9/hook", events: ["lead_captured"] } })).status).toBe(201);
    expect((await h.call("/webhooks", { json: { url: "http://[::1]:9/hook", events: ["lead_captured"] } })).status).toBe(422);
  });

  it("CHATSVC_WEBHOOKS_ALLOW_PRIVATE=1 allows them too", async () => {
    h = await startHarness({ env: { CHATSVC_WEBHOOKS_ALLOW_PRIVATE: "1" } });
    expect((await h.call("/webhooks", { json: { url: "http://localhost:9/hook", events: ["lead_captured"] } })).status).toBe(201);
  });
});

describe("GET /webhooks", () => {
  it("lists the organisation's webhooks with delivery statistics", async () => {
    h = await startHarness();
    const other = await addTenant(h.service);
    await h.call("/webhooks", { json: hook });
    await h.call("/webhooks", { json: { url: "https://elsewhere.example.com/", events: ["lead_captured"] }, key: other.key.key });
    const res = await h.call("/webhooks");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: [
        {
          id: expect.any(Number),
          name: "CRM",
          url: hook.url,
          events: hook.events,
          is_active: true,
          total_triggers: 0,
          failed_triggers: 0,
          last_triggered_at: null,
          last_failure: null,
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
        },
      ],
    });
  });

  it("needs an API key", async () => {
    h = await startHarness();
    expect((await h.call("/webhooks", { key: null })).status).toBe(401);
  });
});

describe("DELETE /webhooks/{id}", () => {
  it("deletes the webhook", async () => {
    h = await startHarness();
    const { body } = await h.call("/webhooks", { json: hook });
    const res = await h.call(`/webhooks/${body.data.id}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, message: "Webhook deleted successfully" });
    expect((await h.call("/webhooks")).body.data).toEqual([]);
    expect((await h.call(`/webhooks/${body.data.id}`, { method: "DELETE" })).status).toBe(404);
  });

  it("403 for another organisation's webhook (which survives), 404 for an unknown or malformed id", async () => {
    h = await startHarness();
    const other = await addTenant(h.service);
    const theirs = await h.call("/webhooks", { json: hook, key: other.key.key });
    const res = await h.call(`/webhooks/${theirs.body.data.id}`, { method: "DELETE" });
    expect(res.status).toBe(403);
    expect(res.body.success).toBe(false);
    expect((await h.call("/webhooks", { key: other.key.key })).body.data).toHaveLength(1);
    expect((await h.call("/webhooks/999999", { method: "DELETE" })).status).toBe(404);
    expect((await h.call("/webhooks/abc", { method: "DELETE" })).status).toBe(404);
  });
});

describe("POST /webhooks/{id}/test", () => {
  it("delivers one signed webhook_test event to a real receiver and answers the outcome; statistics stay as they were", async () => {
    h = await startHarness({ webhooks: { allowPrivateNetworks: true } });
    const receiver = await startReceiver((n) => ({ status: n === 0 ? 204 : 500 }));
    try {
      const { body } = await h.call("/webhooks", { json: { url: `${receiver.url}/hook`, events: ["lead_captured"] } });
      const { id, secret } = body.data;
      const res = await h.call(`/webhooks/${id}/test`, { method: "POST" });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ webhook_id: id, event: "webhook_test", message_id: expect.stringMatching(/^msg_test_[0-9a-f]{32}$/), delivered: true, status: 204, error: null, duration_ms: expect.any(Number) });
      const [got] = await receiver.waitFor(1);
      expect(got!.path).toBe("/hook");
      expect(got!.headers["webhook-id"]).toBe(res.body.data.message_id);
      expect(verifyWebhook(secret, got!.headers, got!.body)).toBe(true);
      const wrong = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
      expect(verifyWebhook(wrong, got!.headers, got!.body)).toBe(false);
      expect(got!.json).toEqual({ event: "webhook_test", data: { webhook_id: id, name: expect.any(String), url: `${receiver.url}/hook`, message: expect.any(String), sent_at: expect.any(String) } });

      // A failing receiver is an answer too: 200 with what went wrong.
      const failed = await h.call(`/webhooks/${id}/test`, { method: "POST" });
      expect(failed.status).toBe(200);
      expect(failed.body.data).toMatchObject({ delivered: false, status: 500, error: "HTTP 500" });
      expect((await h.call("/webhooks")).body.data[0]).toMatchObject({ total_triggers: 0, failed_triggers: 0, last_triggered_at: null, last_failure: null });
    } finally {
      await receiver.close();
    }
  });

  it("answers delivered: false with the reason when nothing answers", async () => {
    h = await startHarness({ webhooks: { allowPrivateNetworks: true, timeoutMs: 300 } });
    const receiver = await startReceiver(() => ({ hang: true }));
    try {
      const { body } = await h.call("/webhooks", { json: { url: receiver.url, events: ["lead_captured"] } });
      const res = await h.call(`/webhooks/${body.data.id}/test`, { method: "POST" });
      expect(res.body.data).toMatchObject({ delivered: false, status: null, error: "No answer within 300 ms" });
    } finally {
      await receiver.close();
    }
  });

  it("403 for another organisation's webhook (nothing sent), 404 for an unknown or malformed id", async () => {
    h = await startHarness({ webhooks: { allowPrivateNetworks: true } });
    const receiver = await startReceiver();
    try {
      const other = await addTenant(h.service);
      const theirs = await h.call("/webhooks", { json: { url: receiver.url, events: ["lead_captured"] }, key: other.key.key });
      expect((await h.call(`/webhooks/${theirs.body.data.id}/test`, { method: "POST" })).status).toBe(403);
      expect((await h.call("/webhooks/999999/test", { method: "POST" })).status).toBe(404);
      expect((await h.call("/webhooks/abc/test", { method: "POST" })).status).toBe(404);
      expect(receiver.received).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});

describe("chatsvc webhooks list", () => {
  it("prints every webhook, or one organisation's with --org", async () => {
    h = await startHarness();
    const other = await addTenant(h.service);
    await h.service.webhooks.register(h.tenant.organization.id, { url: "https://a.example.com/", events: ["lead_captured"] });
    await h.service.webhooks.register(other.organization.id, { url: "https://b.example.com/", events: ["message_received"] });
    const run = async (...args: string[]) => {
      const out: string[] = [];
      const write = process.stdout.write;
      process.stdout.write = ((chunk: string) => out.push(chunk) > 0) as typeof process.stdout.write;
      try {
        await createProgram().exitOverride().parseAsync(["node", "chatsvc", ...h.database.cliArgs, "webhooks", "list", ...args]);
      } finally {
        process.stdout.write = write;
      }
      return out.join("");
    };
    const all = JSON.parse(await run("--json"));
    expect(all.map((w: { url: string }) => w.url)).toEqual(["https://a.example.com/", "https://b.example.com/"]);
    const mine = JSON.parse(await run("--json", "--org", String(other.organization.id)));
    expect(mine).toEqual([expect.objectContaining({ url: "https://b.example.com/", events: ["message_received"], total_triggers: 0, failed_triggers: 0 })]);
    expect(JSON.stringify(mine)).not.toContain("whsec_");
    // As the delivery worker records a failed attempt.
    await sqlOf(h.service).run("UPDATE webhooks SET last_failure_at = ?, last_failure_status = 503, last_failure_error = 'HTTP 503' WHERE url = ?", "2026-01-02T03:04:05.000Z", "https://a.example.com/");
    const table = await run();
    expect(table).toMatch(/total_triggers/);
    expect(table).toMatch(/last_failure/);
    expect(table).toContain("https://a.example.com/");
    expect(table).toContain("2026-01-02T03:04:05.000Z HTTP 503");
    expect(JSON.parse(await run("--json"))[0].last_failure).toEqual({ at: "2026-01-02T03:04:05.000Z", status: 503, error: "HTTP 503" });
  });
});
