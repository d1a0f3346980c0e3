/** A stored API key joined with its owner's e-mail; never the secret, only its SHA-256. */
export interface KeyRecord {
  id: number;
  user_id: number;
  email: string;
  name: string;
  prefix: string;
  status: "active" | "disabled";
  expires_at: string | null;
  last_used_at: string | null;
  attribution_accepted_at: string;
  attribution_ip: string | null;
  created_at: string;
}

/** What authenticating a request needs about a key, found by its hash. */
export interface KeyAuthRecord {
  id: number;
  prefix: string;
  status: "active" | "disabled";
  expires_at: string | null;
  user_id: number;
  email: string;
  organization_id: number;
  /**
   * The `keys` change counter read in the same snapshot as the row, on engines
   * whose change feed lags (PostgreSQL): the key is as found here until it moves.
   */
  revision?: number;
}

export interface NewKey {
  /** The owner by id or by (normalised) e-mail. */
  owner: { id: number } | { email: string };
  name: string;
  prefix: string;
  key_hash: string;
  expires_at: string | null;
  attribution_ip: string | null;
  /** Creation and attribution acceptance time. */
  now: string;
}

/**
 * The active-key limit: a key counts while active and not expired at `now`.
 * Writes that may add an active key check it inside their transaction.
 */
export interface ActiveKeyLimit {
  max: number;
  now: string;
}

export interface KeyStore {
  /** The authentication lookup (every request whose key is not cached). */
  findByHash(keyHash: string): Promise<KeyAuthRecord | undefined>;
  find(id: number): Promise<KeyRecord | undefined>;
  /** Filtered by owner id or normalised e-mail, or all; oldest first. */
  list(filter?: { user_id?: number; email?: string }): Promise<KeyRecord[]>;
  /** One transaction: finds the owner, checks the limit, inserts. */
  create(key: NewKey, limit: ActiveKeyLimit): Promise<KeyRecord | "no-user" | "limit">;
  rename(id: number, name: string): Promise<KeyRecord | undefined>;
  disable(id: number): Promise<KeyRecord | undefined>;
  /** One transaction: an active key is returned as is; otherwise checks the limit and activates. */
  enable(id: number, limit: ActiveKeyLimit): Promise<KeyRecord | "missing" | "limit">;
  /**
   * One transaction: a key that is not active is checked against the limit;
   * then the new hash and prefix replace the old (old secret dead at commit),
   * the key is active, `last_used_at` cleared and `created_at` set to `now`.
   */
  regenerate(id: number, secret: { key_hash: string; prefix: string }, limit: ActiveKeyLimit): Promise<KeyRecord | "missing" | "limit">;
  /** False when there was no such key. */
  delete(id: number): Promise<boolean>;
  /** Writes batched `last_used_at` times (key id, ISO time) in one transaction; unknown ids are ignored. */
  touch(uses: [keyId: number, at: string][]): Promise<void>;
}
