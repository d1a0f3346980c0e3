import { createHash, randomBytes } from "node:crypto";
import { z } from "zod";
import { ATTRIBUTION_NOTICE } from "./attribution.js";
import { nowIso } from "./clock.js";
import type { ChangeFeed, KeyRecord, KeyStore } from "./storage/index.js";
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

export type Keys = ReturnType<typeof createKeys>;

export interface KeysOptions {
  /** How often batched `last_used_at` updates are written. Default 1 000 ms. */
  flushIntervalMs?: number;
}

interface VerifiedKey {
  principal: Principal;
  /** Epoch ms; Infinity for a key that never expires. */
  expiresAtMs: number;
  /** The `keys` change counter the key was read at, where the engine gives one (PostgreSQL). */
  revision: number | undefined;
}

/** Most keys remembered as verified; past it the cache starts over (a few per user are normal). */
const MAX_VERIFIED = 10_000;

/**
 * Principals of keys verified before, by the presented key, so a request
 * needs neither a SHA-256 nor a query. Changes made through this service
 * clear it explicitly; changes made elsewhere (the CLI in another process,
 * another instance) move the storage's `keys` change version, which is read
 * on every lookup. On SQLite that version is exact on every call; on
 * PostgreSQL it is polled, so a request there is also confirmed against the
 * counter read during the request (`keys.confirm`). Only active keys are
 * remembered; expiry is checked on every use.
 */
function createPrincipalCache(changes: ChangeFeed) {
  const entries = new Map<string, VerifiedKey>();
  let seen = -1;
  return {
    get(key: string): VerifiedKey | undefined {
      const version = changes.version("keys");
      if (version !== seen) {
        entries.clear();
        seen = version;
        return undefined;
      }
      return entries.get(key);
    },
    /** The entry as remembered, whatever the polled version says (the caller has a fresher counter). */
    peek(key: string): VerifiedKey | undefined {
      return entries.get(key);
    },
    forget(key: string): void {
      entries.delete(key);
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

export function createKeys(store: KeyStore, changes: ChangeFeed, { flushIntervalMs = 1_000 }: KeysOptions = {}) {
  // Epoch ms: an ISO string per request would cost more than the rest of the touch.
  const pendingTouches = new Map<number, number>();
  let timer: NodeJS.Timeout | undefined;
  const verified = createPrincipalCache(changes);

  const flush = async (): Promise<void> => {
    timer = undefined;
    if (pendingTouches.size === 0) return;
    const batch = [...pendingTouches];
    pendingTouches.clear();
    try {
      await store.touch(batch.map(([keyId, at]) => [keyId, new Date(at).toISOString()]));
    } catch {
      // Busy or closing: keep the newest times for the next flush; they are advisory.
      for (const [keyId, at] of batch) if (!pendingTouches.has(keyId)) pendingTouches.set(keyId, at);
    }
  };

  const pendingTouchOf = (keyId: number): string | undefined => {
    const at = pendingTouches.get(keyId);
    return at === undefined ? undefined : new Date(at).toISOString();
  };

  const toApiKey = (row: KeyRecord): ApiKey => ({
    ...row,
    status: row.status === "active" && row.expires_at !== null && row.expires_at <= nowIso() ? "expired" : row.status,
    last_used_at: pendingTouchOf(row.id) ?? row.last_used_at,
  });

  const found = <T>(row: T | undefined | "missing", keyId: number): T => {
    if (row === undefined || row === "missing") throw ChatsvcError.notFound(`API key ${keyId} not found`);
    return row;
  };

  const limitError = () =>
    ChatsvcError.validation({ key: [`A user can have at most ${MAX_ACTIVE_KEYS_PER_USER} active API keys; disable or delete one first.`] });

  const limit = () => ({ max: MAX_ACTIVE_KEYS_PER_USER, now: nowIso() });

  const unexpired = (entry: VerifiedKey): Principal => {
    if (entry.expiresAtMs <= Date.now()) throw ChatsvcError.unauthorized("API key has expired");
    return entry.principal;
  };

  const lookUp = async (key: string): Promise<Principal> => {
    if (!key.startsWith(KEY_PREFIX)) throw ChatsvcError.unauthorized("Invalid API key format");
    if (!KEY_SHAPE.test(key)) throw ChatsvcError.unauthorized("Invalid API key");
    const row = await store.findByHash(hashApiKey(key));
    if (!row) throw ChatsvcError.unauthorized("Invalid API key");
    if (row.status !== "active") throw ChatsvcError.unauthorized("API key is disabled");
    const entry: VerifiedKey = {
      principal: { keyId: row.id, keyPrefix: row.prefix, userId: row.user_id, organizationId: row.organization_id, email: row.email },
      expiresAtMs: row.expires_at === null ? Infinity : Date.parse(row.expires_at),
      revision: row.revision,
    };
    verified.set(key, entry);
    return unexpired(entry);
  };

  return {
    /**
     * Verifies a presented key. Returns who is calling, or throws the 401 with
     * the exact message DESIGN.md fixes for each case. A key verified before
     * (and not changed since) is answered at once, without a promise: most
     * requests are, and the request path then stays synchronous.
     */
    verify(presented: string | undefined | null): Principal | Promise<Principal> {
      if (presented === undefined || presented === null || presented.trim() === "") throw ChatsvcError.unauthorized("API key is required");
      const key = presented.trim();
      const entry = verified.get(key);
      return entry ? unexpired(entry) : lookUp(key);
    },

    /**
     * Re-checks a key against the `keys` change counter read while answering
     * this request (engines whose change feed lags: PostgreSQL). When the key
     * was read at that counter, nothing about it changed since and its
     * principal is answered at once; otherwise it is read again, with the same
     * 401s as `verify`. So a key disabled, regenerated or deleted anywhere is
     * refused by the first request whose counter read started after the change committed.
     */
    confirm(presented: string | undefined | null, keysRevision: number): Principal | Promise<Principal> {
      if (presented === undefined || presented === null || presented.trim() === "") throw ChatsvcError.unauthorized("API key is required");
      const key = presented.trim();
      const entry = verified.peek(key);
      if (entry && entry.revision === keysRevision) return unexpired(entry);
      // Until the poll clears the rest, other remembered keys are confirmed the same way on their next use.
      verified.forget(key);
      return lookUp(key);
    },

    /** Verifies a key from the database, never from memory: for rare checks that must see every change at once (console sign-in). */
    verifyStored(presented: string): Promise<Principal> {
      if (presented.trim() === "") return Promise.reject(ChatsvcError.unauthorized("API key is required"));
      return lookUp(presented.trim());
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
    flush(): Promise<void> {
      if (timer) clearTimeout(timer);
      return flush();
    },

    async create(input: CreateApiKeyInput): Promise<IssuedApiKey> {
      const data = parse(createSchema, input);
      let expiresAt: string | null = null;
      if (data.expires_at) {
        const date = parseExpiry(data.expires_at.trim());
        if (!date) throw ChatsvcError.validation({ expires_at: ["The expires at field must be an ISO 8601 date or date-time."] });
        if (date.getTime() <= Date.now()) throw ChatsvcError.validation({ expires_at: ["The expires at field must be in the future."] });
        expiresAt = date.toISOString();
      }
      const key = generateApiKey();
      const created = await store.create(
        {
          owner: data.user_id !== undefined ? { id: data.user_id } : { email: data.email!.trim().toLowerCase() },
          name: data.name.trim(),
          prefix: key.slice(0, VISIBLE_PREFIX_LENGTH),
          key_hash: hashApiKey(key),
          expires_at: expiresAt,
          attribution_ip: data.ip ?? null,
          now: nowIso(),
        },
        limit(),
      );
      if (created === "no-user") throw ChatsvcError.notFound(data.user_id !== undefined ? `User ${data.user_id} not found` : `No user with email ${data.email}`);
      if (created === "limit") throw limitError();
      return { ...toApiKey(created), key };
    },

    async list(filter: { email?: string; user_id?: number } = {}): Promise<ApiKey[]> {
      const rows = await store.list(filter.user_id !== undefined ? { user_id: filter.user_id } : filter.email !== undefined ? { email: filter.email.trim().toLowerCase() } : {});
      return rows.map(toApiKey);
    },

    async get(keyId: number): Promise<ApiKey> {
      return toApiKey(found(await store.find(keyId), keyId));
    },

    async rename(keyId: number, name: string): Promise<ApiKey> {
      const data = parse(nameSchema, { name });
      return toApiKey(found(await store.rename(keyId, data.name.trim()), keyId));
    },

    async disable(keyId: number): Promise<ApiKey> {
      verified.clear();
      const row = found(await store.disable(keyId), keyId);
      // A request verified while the write was in flight may have cached the key again.
      verified.clear();
      return toApiKey(row);
    },

    async enable(keyId: number): Promise<ApiKey> {
      const row = await store.enable(keyId, limit());
      if (row === "limit") throw limitError();
      return toApiKey(found(row, keyId));
    },

    /**
     * Replaces the secret of a key: the old key stops working at once, the new
     * one is active and shown once. The record (id, name, expiry) is kept.
     */
    async regenerate(keyId: number): Promise<IssuedApiKey> {
      const key = generateApiKey();
      const row = await store.regenerate(keyId, { key_hash: hashApiKey(key), prefix: key.slice(0, VISIBLE_PREFIX_LENGTH) }, limit());
      if (row === "limit") throw limitError();
      pendingTouches.delete(keyId);
      verified.clear();
      return { ...toApiKey(found(row, keyId)), key };
    },

    /** Removes a key permanently. */
    async delete(keyId: number): Promise<void> {
      pendingTouches.delete(keyId);
      verified.clear();
      const deleted = await store.delete(keyId);
      verified.clear();
      if (!deleted) throw ChatsvcError.notFound(`API key ${keyId} not found`);
    },
  };
}
