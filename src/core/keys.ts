import { createHash, randomBytes } from "node:crypto";
import { and, count, eq, gt, isNull, or } from "drizzle-orm";
import { z } from "zod";
import { ATTRIBUTION_NOTICE } from "./attribution.js";
import { nowIso } from "./clock.js";
import type { Db, Sqlite } from "./db/open.js";
import { apiKeys, users } from "./db/schema.js";
import { ChatsvcError } from "./errors.js";
import { id, parse, text } from "./validation.js";

export const KEY_PREFIX = "sk_live_";
/** Visible part of a key after creation: `sk_live_` plus 7 characters. */
export const VISIBLE_PREFIX_LENGTH = 15;
export const MAX_ACTIVE_KEYS_PER_USER = 10;

export { ATTRIBUTION_NOTICE };

/** What a verified key proves: who is calling, for which organisation. */
export interface Principal {
  keyId: number;
  keyPrefix: string;
  userId: number;
  organizationId: number;
  email: string;
}

/** An API key as listed: never the secret, only its first 15 characters. */
export interface ApiKey {
  id: number;
  user_id: number;
  email: string;
  name: string;
  prefix: string;
  status: "active" | "disabled" | "expired";
  expires_at: string | null;
  last_used_at: string | null;
  attribution_accepted_at: string;
  attribution_ip: string | null;
  created_at: string;
}

/** A key at creation or regeneration: the only time the full `key` exists outside the caller. */
export interface IssuedApiKey extends ApiKey {
  key: string;
}

export interface CreateApiKeyInput {
  /** The owner, by id or e-mail. */
  user_id?: number;
  email?: string;
  name: string;
  /** ISO date (`2027-01-31`, valid through that UTC day) or date-time. */
  expires_at?: string | null;
  /** Must be true: creating a key means accepting the attribution obligation. */
  accept_attribution: boolean;
  /** Address the acceptance came from, recorded with it. */
  ip?: string | null;
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const KEY_SHAPE = /^sk_live_[0-9A-Za-z]{32}$/;

/** `sk_live_` + 32 base62 characters, unbiased (rejection sampling over random bytes). */
export function generateApiKey(): string {
  let out = KEY_PREFIX;
  while (out.length < KEY_PREFIX.length + 32) {
    for (const byte of randomBytes(48)) {
      // 248 = 62 * 4: bytes above it would favour the first characters.
      if (byte < 248 && out.length < KEY_PREFIX.length + 32) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** Parses an expiry: a bare date means the end of that UTC day. */
export function parseExpiry(value: string): Date | undefined {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const day = new Date(`${value}T00:00:00.000Z`);
    if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== value) return undefined;
    return new Date(day.getTime() + 86_400_000);
  }
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value)) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

const createSchema = z
  .object({
    user_id: id("user_id").optional(),
    email: text("email", { max: 254 }).optional(),
    name: text("name", { min: 1, max: 100 }),
    expires_at: text("expires_at", { max: 40 }).nullable().optional(),
    accept_attribution: z.literal(true, { error: `You must accept the attribution obligation: ${ATTRIBUTION_NOTICE}` }),
    ip: z.string().max(64).nullable().optional(),
  })
  .refine((v) => v.user_id !== undefined || v.email !== undefined, { message: "Give the key's owner (user_id or email).", path: ["email"] });

const nameSchema = z.object({ name: text("name", { min: 1, max: 100 }) });

type Row = typeof apiKeys.$inferSelect;

export type Keys = ReturnType<typeof createKeys>;

export interface KeysOptions {
  /** How often batched `last_used_at` updates are written. Default 1 000 ms. */
  flushIntervalMs?: number;
}

interface VerifiedKey {
  principal: Principal;
  /** Epoch ms; Infinity for a key that never expires. */
  expiresAtMs: number;
}

/** Most keys remembered as verified; past it the cache starts over (a few per user are normal). */
const MAX_VERIFIED = 10_000;

/**
 * Principals of keys verified before, by the presented key, so a request
 * needs neither a SHA-256 nor a query. Changes this connection makes clear
 * it explicitly; changes by any other connection (the CLI in another process
 * disabling or deleting a key) change `PRAGMA data_version`, which is read on
 * every lookup, so they take effect at the next request. Only active keys
 * are remembered; expiry is checked on every use.
 */
function createPrincipalCache(sqlite: Sqlite) {
  const dataVersion = sqlite.prepare<[], number>("PRAGMA data_version").pluck();
  const entries = new Map<string, VerifiedKey>();
  let seen = -1;
  return {
    get(key: string): VerifiedKey | undefined {
      const version = dataVersion.get()!;
      if (version !== seen) {
        entries.clear();
        seen = version;
        return undefined;
      }
      return entries.get(key);
    },
    set(key: string, entry: VerifiedKey): void {
      if (entries.size >= MAX_VERIFIED) entries.clear();
      entries.set(key, entry);
    },
    clear(): void {
      entries.clear();
    },
  };
}

export function createKeys(db: Db, { flushIntervalMs = 1_000 }: KeysOptions = {}) {
  const sqlite = db.$client;
  // The lookup every authenticated request makes: prepared once, raw.
  const lookup = sqlite.prepare<[string], { id: number; prefix: string; status: string; expires_at: string | null; user_id: number; email: string; organization_id: number }>(
    `SELECT k.id, k.prefix, k.status, k.expires_at, u.id AS user_id, u.email, u.organization_id
       FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?`,
  );
  const touchStmt = sqlite.prepare<[string, number]>("UPDATE api_keys SET last_used_at = ? WHERE id = ?");
  // Epoch ms: an ISO string per request would cost more than the rest of the touch.
  const pendingTouches = new Map<number, number>();
  let timer: NodeJS.Timeout | undefined;
  const verified = createPrincipalCache(sqlite);

  const flush = () => {
    timer = undefined;
    if (pendingTouches.size === 0) return;
    const batch = [...pendingTouches];
    pendingTouches.clear();
    try {
      sqlite.transaction(() => {
        for (const [keyId, at] of batch) touchStmt.run(new Date(at).toISOString(), keyId);
      })();
    } catch {
      // Busy or closing: keep the newest times for the next flush; they are advisory.
      for (const [keyId, at] of batch) if (!pendingTouches.has(keyId)) pendingTouches.set(keyId, at);
    }
  };

  const pendingTouchOf = (keyId: number): string | undefined => {
    const at = pendingTouches.get(keyId);
    return at === undefined ? undefined : new Date(at).toISOString();
  };

  const rowWithEmail = (row: Row, email: string): ApiKey => ({
    id: row.id,
    user_id: row.userId,
    email,
    name: row.name,
    prefix: row.prefix,
    status: row.status === "active" && row.expiresAt !== null && row.expiresAt <= nowIso() ? "expired" : row.status,
    expires_at: row.expiresAt,
    last_used_at: pendingTouchOf(row.id) ?? row.lastUsedAt,
    attribution_accepted_at: row.attributionAcceptedAt,
    attribution_ip: row.attributionIp,
    created_at: row.createdAt,
  });

  const load = (keyId: number) => {
    const found = db.select({ key: apiKeys, email: users.email }).from(apiKeys).innerJoin(users, eq(users.id, apiKeys.userId)).where(eq(apiKeys.id, keyId)).get();
    if (!found) throw ChatsvcError.notFound(`API key ${keyId} not found`);
    return found;
  };

  const activeCount = (tx: Pick<Db, "select">, userId: number): number =>
    tx
      .select({ n: count() })
      .from(apiKeys)
      .where(and(eq(apiKeys.userId, userId), eq(apiKeys.status, "active"), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, nowIso()))))
      .get()!.n;

  const limitError = () =>
    ChatsvcError.validation({ key: [`A user can have at most ${MAX_ACTIVE_KEYS_PER_USER} active API keys; disable or delete one first.`] });

  return {
    /**
     * Verifies a presented key. Returns who is calling, or throws the 401 with
     * the exact message DESIGN.md fixes for each case.
     */
    verify(presented: string | undefined | null): Principal {
      if (presented === undefined || presented === null || presented.trim() === "") throw ChatsvcError.unauthorized("API key is required");
      const key = presented.trim();
      let entry = verified.get(key);
      if (!entry) {
        if (!key.startsWith(KEY_PREFIX)) throw ChatsvcError.unauthorized("Invalid API key format");
        if (!KEY_SHAPE.test(key)) throw ChatsvcError.unauthorized("Invalid API key");
        const row = lookup.get(hashApiKey(key));
        if (!row) throw ChatsvcError.unauthorized("Invalid API key");
        if (row.status !== "active") throw ChatsvcError.unauthorized("API key is disabled");
        entry = {
          principal: { keyId: row.id, keyPrefix: row.prefix, userId: row.user_id, organizationId: row.organization_id, email: row.email },
          expiresAtMs: row.expires_at === null ? Infinity : Date.parse(row.expires_at),
        };
        verified.set(key, entry);
      }
      if (entry.expiresAtMs <= Date.now()) throw ChatsvcError.unauthorized("API key has expired");
      return entry.principal;
    },

    /** Records a successful use; written in batches off the request path. */
    touch(keyId: number): void {
      pendingTouches.set(keyId, Date.now());
      if (!timer) {
        timer = setTimeout(flush, flushIntervalMs);
        timer.unref();
      }
    },

    /** Writes pending `last_used_at` updates now (also done by `close`). */
    flush(): void {
      if (timer) clearTimeout(timer);
      flush();
    },

    create(input: CreateApiKeyInput): IssuedApiKey {
      const data = parse(createSchema, input);
      let expiresAt: string | null = null;
      if (data.expires_at) {
        const date = parseExpiry(data.expires_at.trim());
        if (!date) throw ChatsvcError.validation({ expires_at: ["The expires at field must be an ISO 8601 date or date-time."] });
        if (date.getTime() <= Date.now()) throw ChatsvcError.validation({ expires_at: ["The expires at field must be in the future."] });
        expiresAt = date.toISOString();
      }
      const key = generateApiKey();
      const now = nowIso();
      return db.transaction(
        (tx) => {
          const owner =
            data.user_id !== undefined
              ? tx.select().from(users).where(eq(users.id, data.user_id)).get()
              : tx.select().from(users).where(eq(users.email, data.email!.trim().toLowerCase())).get();
          if (!owner) throw ChatsvcError.notFound(data.user_id !== undefined ? `User ${data.user_id} not found` : `No user with email ${data.email}`);
          if (activeCount(tx, owner.id) >= MAX_ACTIVE_KEYS_PER_USER) throw limitError();
          const row = tx
            .insert(apiKeys)
            .values({
              userId: owner.id,
              name: data.name.trim(),
              prefix: key.slice(0, VISIBLE_PREFIX_LENGTH),
              keyHash: hashApiKey(key),
              status: "active",
              expiresAt,
              attributionAcceptedAt: now,
              attributionIp: data.ip ?? null,
              createdAt: now,
            })
            .returning()
            .get();
          return { ...rowWithEmail(row, owner.email), key };
        },
        { behavior: "immediate" },
      );
    },

    list(filter: { email?: string; user_id?: number } = {}): ApiKey[] {
      const q = db.select({ key: apiKeys, email: users.email }).from(apiKeys).innerJoin(users, eq(users.id, apiKeys.userId));
      const where =
        filter.user_id !== undefined ? eq(apiKeys.userId, filter.user_id) : filter.email !== undefined ? eq(users.email, filter.email.trim().toLowerCase()) : undefined;
      return (where ? q.where(where) : q).orderBy(apiKeys.id).all().map((r) => rowWithEmail(r.key, r.email));
    },

    get(keyId: number): ApiKey {
      const { key, email } = load(keyId);
      return rowWithEmail(key, email);
    },

    rename(keyId: number, name: string): ApiKey {
      const data = parse(nameSchema, { name });
      const { email } = load(keyId);
      const row = db.update(apiKeys).set({ name: data.name.trim() }).where(eq(apiKeys.id, keyId)).returning().get()!;
      return rowWithEmail(row, email);
    },

    disable(keyId: number): ApiKey {
      const { email } = load(keyId);
      verified.clear();
      const row = db.update(apiKeys).set({ status: "disabled" }).where(eq(apiKeys.id, keyId)).returning().get()!;
      return rowWithEmail(row, email);
    },

    enable(keyId: number): ApiKey {
      return db.transaction(
        (tx) => {
          const found = tx.select({ key: apiKeys, email: users.email }).from(apiKeys).innerJoin(users, eq(users.id, apiKeys.userId)).where(eq(apiKeys.id, keyId)).get();
          if (!found) throw ChatsvcError.notFound(`API key ${keyId} not found`);
          if (found.key.status === "active") return rowWithEmail(found.key, found.email);
          if (activeCount(tx, found.key.userId) >= MAX_ACTIVE_KEYS_PER_USER) throw limitError();
          const row = tx.update(apiKeys).set({ status: "active" }).where(eq(apiKeys.id, keyId)).returning().get()!;
          return rowWithEmail(row, found.email);
        },
        { behavior: "immediate" },
      );
    },

    /**
     * Replaces the secret of a key: the old key stops working at once, the new
     * one is active and shown once. The record (id, name, expiry) is kept.
     */
    regenerate(keyId: number): IssuedApiKey {
      const key = generateApiKey();
      return db.transaction(
        (tx) => {
          const found = tx.select({ key: apiKeys, email: users.email }).from(apiKeys).innerJoin(users, eq(users.id, apiKeys.userId)).where(eq(apiKeys.id, keyId)).get();
          if (!found) throw ChatsvcError.notFound(`API key ${keyId} not found`);
          if (found.key.status !== "active" && activeCount(tx, found.key.userId) >= MAX_ACTIVE_KEYS_PER_USER) throw limitError();
          pendingTouches.delete(keyId);
          verified.clear();
          const row = tx
            .update(apiKeys)
            .set({ keyHash: hashApiKey(key), prefix: key.slice(0, VISIBLE_PREFIX_LENGTH), status: "active", lastUsedAt: null, createdAt: nowIso() })
            .where(eq(apiKeys.id, keyId))
            .returning()
            .get()!;
          return { ...rowWithEmail(row, found.email), key };
        },
        { behavior: "immediate" },
      );
    },

    /** Removes a key permanently. */
    delete(keyId: number): void {
      pendingTouches.delete(keyId);
      verified.clear();
      const deleted = db.delete(apiKeys).where(eq(apiKeys.id, keyId)).returning({ id: apiKeys.id }).get();
      if (!deleted) throw ChatsvcError.notFound(`API key ${keyId} not found`);
    },
  };
}
