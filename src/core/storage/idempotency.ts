/** A stored `Idempotency-Key` record. */
export interface IdempotencyRecord {
  fingerprint: string;
  state: "running" | "done";
  status: number | null;
  body: string | null;
  created_at: string;
}

/** What {@link IdempotencyStore.claim} found: the key is now the caller's, or someone's record stands. */
export type IdempotencyClaim = { claimed: true } | { claimed: false; record: IdempotencyRecord };

/** `Idempotency-Key` records per organisation, shared by every instance. */
export interface IdempotencyStore {
  /**
   * Claims the key for a request with this fingerprint (a conditional upsert),
   * or returns the record that stands: a finished answer or a request still
   * running. Records created before `expiredBefore` count as absent, and so do
   * running ones created before `staleBefore`.
   */
  claim(organizationId: number, key: string, fingerprint: string, at: { now: string; expiredBefore: string; staleBefore: string }): Promise<IdempotencyClaim>;
  /** Stores the answer of the running request that claimed the key. */
  complete(organizationId: number, key: string, fingerprint: string, status: number, body: string): Promise<void>;
  /** Frees the key of a running request that changed nothing, so a retry runs afresh. */
  release(organizationId: number, key: string, fingerprint: string): Promise<void>;
  /** Deletes records created before `before`; returns how many. */
  prune(before: string): Promise<number>;
}
