import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createChatService, type ChatService } from "../../src/service.js";
import { testDatabase } from "../support/database.js";
import { createWidgetTokens, widgetSecret } from "../../src/http/widget/token.js";
import { tempDir } from "../support/harness.js";

const SECRET = Buffer.alloc(32, 7);

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return { status: (error as { status: number }).status, message: (error as Error).message };
  }
  throw new Error("expected a refusal");
};

describe("widget tokens", () => {
  it("carry the conversation and chatbot they were issued for, until they expire", () => {
    let now = 1_700_000_000_000;
    const tokens = createWidgetTokens(SECRET, { ttlSeconds: 60, now: () => now });
    const { token, expires_at } = tokens.issue(42, 7);
    expect(expires_at).toBe(new Date(now + 60_000).toISOString());
    expect(tokens.verify(token)).toEqual({ conversation_id: 42, chatbot_id: 7, exp: 1_700_000_060 });
    now += 60_000;
    expect(refusal(() => tokens.verify(token))).toEqual({ status: 401, message: "Widget token has expired" });
  });

  it("refuse a missing, malformed, re-signed or edited token with 401", () => {
    const tokens = createWidgetTokens(SECRET, { ttlSeconds: 60 });
    const { token } = tokens.issue(1, 1);
    const [version, body, signature] = token.split(".");
    const forged = Buffer.from(JSON.stringify({ conversation_id: 2, chatbot_id: 1, exp: 9_999_999_999 })).toString("base64url");
    const otherSecret = createWidgetTokens(Buffer.alloc(32, 8), { ttlSeconds: 60 }).issue(1, 1).token;
    expect(refusal(() => tokens.verify(undefined))).toEqual({ status: 401, message: "Widget token is required" });
    for (const bad of ["garbage", `${version}.${forged}.${signature}`, otherSecret, `${version}.${body}.${signature}x`, `v2.${body}.${signature}`, `${token}.extra`]) {
      expect(refusal(() => tokens.verify(bad))).toEqual({ status: 401, message: "Invalid widget token" });
    }
  });

  it("refuse every signature that is not the canonical base64url encoding, though it decodes to the right bytes", () => {
    const tokens = createWidgetTokens(SECRET, { ttlSeconds: 60, now: () => 1_700_000_000_000 });
    // A signature with '-' or '_', so that its standard-base64 spelling differs.
    const token = Array.from({ length: 50 }, (_, i) => tokens.issue(i + 1, 1).token).find((t) => /[-_]/.test(t.split(".")[2]!))!;
    const [version, body, signature] = token.split(".") as [string, string, string];
    expect(tokens.verify(token).chatbot_id).toBe(1);
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(signature.at(-1)!);
    const variants = [
      `${signature}=`,
      `${signature}==`,
      signature.replace(/-/g, "+").replace(/_/g, "/"),
      Buffer.from(signature, "base64url").toString("base64"),
      // The last character carries 4 bits of the digest; its 2 low bits are padding.
      ...[1, 2, 3].map((flip) => signature.slice(0, -1) + alphabet[last ^ flip]),
      `${signature.slice(0, 10)}!${signature.slice(10)}`,
    ];
    for (const variant of variants) {
      expect(Buffer.from(variant, "base64url").equals(Buffer.from(signature, "base64url")), variant).toBe(true);
      expect(refusal(() => tokens.verify(`${version}.${body}.${variant}`)), variant).toEqual({ status: 401, message: "Invalid widget token" });
    }
  });
});

describe("the signing secret", () => {
  let service: ChatService | undefined;
  const dirs: (() => void)[] = [];
  afterEach(async () => {
    await service?.close();
    dirs.splice(0).forEach((cleanup) => cleanup());
  });

  it("is created once per database and kept, so tokens survive a restart", async () => {
    const { dir, cleanup } = tempDir();
    dirs.push(cleanup);
    const database = await testDatabase(dir);
    dirs.push(() => void database.drop());
    const db = database.options;
    service = await createChatService({ ...db, env: {} });
    const first = await widgetSecret(service);
    expect(first).toHaveLength(32);
    const { token } = createWidgetTokens(first, { ttlSeconds: 60 }).issue(5, 3);
    await service.close();

    service = await createChatService({ ...db, env: {} });
    const again = await widgetSecret(service);
    expect(again.equals(first)).toBe(true);
    expect(createWidgetTokens(again, { ttlSeconds: 60 }).verify(token).conversation_id).toBe(5);

    const other = tempDir();
    dirs.push(other.cleanup);
    const otherDatabase = await testDatabase(other.dir);
    dirs.push(() => void otherDatabase.drop());
    const elsewhere = await createChatService({ ...otherDatabase.options, env: {} });
    expect((await widgetSecret(elsewhere)).equals(first)).toBe(false);
    await elsewhere.close();
  });
});
