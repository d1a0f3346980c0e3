import { describe, expect, it } from "vitest";
import { databaseContents } from "../support/database.js";
import { addTenant, sharedHarness, startHarness, type Harness } from "../support/harness.js";

// One service for the file: a test that changes a key or an organisation does it to a tenant of its own.
const shared = sharedHarness();
let tenants = 0;

/** A new organisation with its owner, chatbot and key. */
const freshTenant = () => addTenant(shared().service, `Tenant ${++tenants}`);

describe("GET /auth/test", () => {
  it("answers with the account behind a Bearer key", async () => {
    const h = shared();
    const res = await h.call("/auth/test");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      message: "Authentication successful",
      data: { user_id: h.tenant.user.id, organization_id: h.tenant.organization.id, email: "owner@acme.test" },
    });
  });

  it("accepts X-API-Key, and Bearer wins when both are sent", async () => {
    const h = shared();
    const viaHeader = await h.call("/auth/test", { key: null, headers: { "x-api-key": h.tenant.key.key } });
    expect(viaHeader.status).toBe(200);
    const both = await h.call("/auth/test", { headers: { "x-api-key": "sk_live_wrongwrongwrongwrongwrongwrong12" } });
    expect(both.status).toBe(200);
    const bearerWrong = await h.call("/auth/test", { key: "sk_live_wrongwrongwrongwrongwrongwrong12", headers: { "x-api-key": h.tenant.key.key } });
    expect(bearerWrong.status).toBe(401);
  });

  type Tenant = Awaited<ReturnType<typeof freshTenant>>;
  const cases: [string, (h: Harness, t: Tenant) => Promise<string | null>, string][] = [
    ["absent", async () => null, "API key is required"],
    ["malformed", async () => "pk_test_123", "Invalid API key format"],
    ["unknown", async () => "sk_live_" + "A".repeat(32), "Invalid API key"],
    ["truncated", async (_h, t) => t.key.key.slice(0, 20), "Invalid API key"],
    [
      "disabled",
      async (h, t) => {
        await h.service.keys.disable(t.key.id);
        return t.key.key;
      },
      "API key is disabled",
    ],
    [
      "deleted",
      async (h, t) => {
        await h.service.keys.delete(t.key.id);
        return t.key.key;
      },
      "Invalid API key",
    ],
    [
      "regenerated (old secret)",
      async (h, t) => {
        await h.service.keys.regenerate(t.key.id);
        return t.key.key;
      },
      "Invalid API key",
    ],
    [
      "expired",
      async (h, t) => {
        const key = await h.service.keys.create({ user_id: t.user.id, name: "short", expires_at: new Date(Date.now() + 1500).toISOString(), accept_attribution: true });
        expect((await h.call("/auth/test", { key: key.key })).status).toBe(200);
        await new Promise((r) => setTimeout(r, 1600));
        return key.key;
      },
      "API key has expired",
    ],
  ];
  for (const [name, prepare, message] of cases) {
    it(`401 for a ${name} key: "${message}"`, async () => {
      const h = shared();
      const t = await freshTenant();
      // The key works until the change under test (the service caches verified keys: a change must reach it).
      expect((await h.call("/auth/test", { key: t.key.key })).status).toBe(200);
      const key = await prepare(h, t);
      const res = await h.call("/auth/test", { key });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ success: false, message });
    });
  }

  it("a regenerated key works at once and keeps the record", async () => {
    const h = shared();
    const t = await freshTenant();
    const fresh = await h.service.keys.regenerate(t.key.id);
    expect(fresh.id).toBe(t.key.id);
    expect(fresh.key).not.toBe(t.key.key);
    expect((await h.call("/auth/test", { key: fresh.key })).status).toBe(200);
  });

  it("re-enabling a disabled key restores access", async () => {
    const h = shared();
    const t = await freshTenant();
    await h.service.keys.disable(t.key.id);
    expect((await h.call("/auth/test", { key: t.key.key })).status).toBe(401);
    await h.service.keys.enable(t.key.id);
    expect((await h.call("/auth/test", { key: t.key.key })).status).toBe(200);
  });

  it("records last_used_at off the request path", async () => {
    const h = shared();
    const t = await freshTenant();
    expect((await h.service.keys.get(t.key.id)).last_used_at).toBeNull();
    await h.call("/auth/test", { key: t.key.key });
    await h.service.keys.flush();
    const raw = (await h.service.keys.list({ user_id: t.user.id })).find((k) => k.id === t.key.id)!.last_used_at;
    expect(raw).not.toBeNull();
    expect(Date.parse(raw!)).toBeGreaterThan(Date.now() - 10_000);
  });
});

describe("chatbot access", () => {
  it("lists only the organisation's active chatbots with meta.total", async () => {
    const h = shared();
    const mine = await freshTenant();
    const other = await freshTenant();
    await h.service.chatbots.create({ organization_id: mine.organization.id, slug: `${mine.chatbot.slug}-offline`, name: "Offline", is_active: false });
    const res = await h.call("/chatbots", { key: mine.key.key });
    expect(res.status).toBe(200);
    expect(res.body.data.map((b: { slug: string }) => b.slug)).toEqual([mine.chatbot.slug]);
    expect(res.body.meta).toEqual({ total: 1 });
    expect(Object.keys(res.body.data[0]).sort()).toEqual(["created_at", "description", "id", "is_active", "language", "name", "slug"]);
    const theirs = await h.call("/chatbots", { key: other.key.key });
    expect(theirs.body.data.map((b: { slug: string }) => b.slug)).toEqual([other.chatbot.slug]);
  });

  it("returns the chatbot detail with appearance and branding", async () => {
    const res = await shared().call("/chatbots/demo");
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
    const h = shared();
    const t = await freshTenant();
    expect((await h.call(`/chatbots/${t.chatbot.slug}`, { key: t.key.key })).body.data.branding.required).toBe(true);
    await h.service.orgs.update(t.organization.id, { brand_removal: true });
    expect((await h.call(`/chatbots/${t.chatbot.slug}`, { key: t.key.key })).body.data.branding.required).toBe(false);
  });

  it("403 for another organisation's slug and for an unknown slug, alike", async () => {
    const h = shared();
    const other = await freshTenant();
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
    // Closes its service to read the whole database: a harness of its own.
    const h = await startHarness();
    try {
      const extra = await h.service.keys.create({ user_id: h.tenant.user.id, name: "second", accept_attribution: true });
      await h.service.close();
      const stored = await databaseContents(h.database);
      for (const key of [h.tenant.key.key, extra.key]) {
        expect(stored.includes(key)).toBe(false);
        expect(stored.includes(key.slice(0, 15))).toBe(true);
      }
    } finally {
      await h.close();
    }
  });
});
