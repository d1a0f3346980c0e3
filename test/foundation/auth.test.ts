import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { databaseContents } from "../support/database.js";
import { addTenant, startHarness, type Harness } from "../support/harness.js";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

describe("GET /auth/test", () => {
  it("answers with the account behind a Bearer key", async () => {
    const res = await h.call("/auth/test");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      message: "Authentication successful",
      data: { user_id: h.tenant.user.id, organization_id: h.tenant.organization.id, email: "owner@acme.test" },
    });
  });

  it("accepts X-API-Key, and Bearer wins when both are sent", async () => {
    const viaHeader = await h.call("/auth/test", { key: null, headers: { "x-api-key": h.tenant.key.key } });
    expect(viaHeader.status).toBe(200);
    const both = await h.call("/auth/test", { headers: { "x-api-key": "sk_live_wrongwrongwrongwrongwrongwrong12" } });
    expect(both.status).toBe(200);
    const bearerWrong = await h.call("/auth/test", { key: "sk_live_wrongwrongwrongwrongwrongwrong12", headers: { "x-api-key": h.tenant.key.key } });
    expect(bearerWrong.status).toBe(401);
  });

  const cases: [string, (h: Harness) => Promise<string | null>, string][] = [
    ["absent", async () => null, "API key is required"],
    ["malformed", async () => "pk_test_123", "Invalid API key format"],
    ["unknown", async () => "sk_live_" + "A".repeat(32), "Invalid API key"],
    ["truncated", async (h) => h.tenant.key.key.slice(0, 20), "Invalid API key"],
    [
      "disabled",
      async (h) => {
        await h.service.keys.disable(h.tenant.key.id);
        return h.tenant.key.key;
      },
      "API key is disabled",
    ],
    [
      "deleted",
      async (h) => {
        await h.service.keys.delete(h.tenant.key.id);
        return h.tenant.key.key;
      },
      "Invalid API key",
    ],
    [
      "regenerated (old secret)",
      async (h) => {
        await h.service.keys.regenerate(h.tenant.key.id);
        return h.tenant.key.key;
      },
      "Invalid API key",
    ],
    [
      "expired",
      async (h) => {
        const key = await h.service.keys.create({ user_id: h.tenant.user.id, name: "short", expires_at: new Date(Date.now() + 1500).toISOString(), accept_attribution: true });
        expect((await h.call("/auth/test", { key: key.key })).status).toBe(200);
        await new Promise((r) => setTimeout(r, 1600));
        return key.key;
      },
      "API key has expired",
    ],
  ];
  for (const [name, prepare, message] of cases) {
    it(`401 for a ${name} key: "${message}"`, async () => {
      const key = await prepare(h);
      const res = await h.call("/auth/test", { key });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ success: false, message });
    });
  }

  it("a regenerated key works at once and keeps the record", async () => {
    const fresh = await h.service.keys.regenerate(h.tenant.key.id);
    expect(fresh.id).toBe(h.tenant.key.id);
    expect(fresh.key).not.toBe(h.tenant.key.key);
    expect((await h.call("/auth/test", { key: fresh.key })).status).toBe(200);
  });

  it("re-enabling a disabled key restores access", async () => {
    await h.service.keys.disable(h.tenant.key.id);
    await h.service.keys.enable(h.tenant.key.id);
    expect((await h.call("/auth/test")).status).toBe(200);
  });

  it("records last_used_at off the request path", async () => {
    expect((await h.service.keys.get(h.tenant.key.id)).last_used_at).toBeNull();
    await h.call("/auth/test");
    await h.service.keys.flush();
    const raw = await readStoredLastUsed(h);
    expect(raw).not.toBeNull();
    expect(Date.parse(raw!)).toBeGreaterThan(Date.now() - 10_000);
  });
});

async function readStoredLastUsed(h: Harness): Promise<string | null> {
  const keys = await h.service.keys.list({ user_id: h.tenant.user.id });
  return keys.find((k) => k.id === h.tenant.key.id)!.last_used_at;
}

describe("chatbot access", () => {
  it("lists only the organisation's active chatbots with meta.total", async () => {
    const other = await addTenant(h.service);
    await h.service.chatbots.create({ organization_id: h.tenant.organization.id, slug: "offline", name: "Offline", is_active: false });
    const res = await h.call("/chatbots");
    expect(res.status).toBe(200);
    expect(res.body.data.map((b: { slug: string }) => b.slug)).toEqual(["demo"]);
    expect(res.body.meta).toEqual({ total: 1 });
    expect(Object.keys(res.body.data[0]).sort()).toEqual(["created_at", "description", "id", "is_active", "language", "name", "slug"]);
    const theirs = await h.call("/chatbots", { key: other.key.key });
    expect(theirs.body.data.map((b: { slug: string }) => b.slug)).toEqual(["other-bot"]);
  });

  it("returns the chatbot detail with appearance and branding", async () => {
    const res = await h.call("/chatbots/demo");
    expect(res.status).toBe(200);
    const d = res.body.data;
    expect(d).toMatchObject({ slug: "demo", is_active: true, has_knowledge_base: expect.any(Boolean) });
    for (const f of ["display_name", "greeting_message", "fallback_message", "placeholder_text", "description", "language", "created_at"]) {
      expect(typeof d[f]).toBe("string");
    }
    expect(d.appearance).toEqual({
      primary_color: expect.stringMatching(/^#[0-9a-f]{6}$/i),
      bubble_color: expect.stringMatching(/^#[0-9a-f]{6}$/i),
      widget_theme: "light",
      profile_image: expect.any(String),
      chat_icon: null,
      bubble_message: expect.any(String),
      show_bubble_message: true,
    });
    expect(d.branding).toEqual({ required: true, text: expect.any(String), url: expect.stringMatching(/^https?:/), icon_url: expect.any(String) });
  });

  it("branding.required follows the organisation's brand removal", async () => {
    await h.service.orgs.update(h.tenant.organization.id, { brand_removal: true });
    expect((await h.call("/chatbots/demo")).body.data.branding.required).toBe(false);
  });

  it("403 for another organisation's slug and for an unknown slug, alike", async () => {
    const other = await addTenant(h.service);
    const theirs = await h.call(`/chatbots/${other.chatbot.slug}`);
    const unknown = await h.call("/chatbots/no-such-bot");
    expect(theirs.status).toBe(403);
    expect(unknown.status).toBe(403);
    expect(theirs.body).toEqual(unknown.body);
    expect(theirs.body.success).toBe(false);
  });
});

describe("keys at rest", () => {
  it("never stores a full key, only its hash and prefix", async () => {
    const extra = await h.service.keys.create({ user_id: h.tenant.user.id, name: "second", accept_attribution: true });
    await h.service.close();
    const stored = await databaseContents(h.database);
    for (const key of [h.tenant.key.key, extra.key]) {
      expect(stored.includes(key)).toBe(false);
      expect(stored.includes(key.slice(0, 15))).toBe(true);
    }
  });
});
