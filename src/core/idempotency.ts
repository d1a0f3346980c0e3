import { createHash } from "node:crypto";
import type { IdempotencyStore } from "./storage/index.js";
import { ChatsvcError } from "./errors.js";

/** How long an organisation's idempotency records are kept (then pruned). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** The request a key is used with: the same key with another method, path or body is refused. */
export interface IdempotentRequest {
  method: string;
  path: string;
  /** The JSON body as sent (serialised), or empty. */
  body: string;
}

/** A stored answer, given back to a retry. */
export interface StoredAnswer {
  status: number;
  /** The JSON body. */
  body: string;
}

/** Either the caller now runs the request (and must `complete` or `release` it), or a stored answer is replayed. */
export type IdempotentStart =
  | { replay: StoredAnswer }
  | { replay?: undefined; complete(answer: StoredAnswer): Promise<void>; release(): Promise<void> };

export type Idempotency = ReturnType<typeof createIdempotency>;

export interface IdempotencyOptions {
  /** How long a running request holds its key before a retry may take it over (its process died). */
  leaseMs: number;
  /** Milliseconds since the epoch. Default `Date.now`. */
  clock?: () => number;
}

const KEY = /^[\x21-\x7e]{1,255}$/;
const PRUNE_EVERY_MS = 60_000;

/**
 * `Idempotency-Key` semantics (IETF httpapi draft), per organisation: the
 * first request with a key runs and its successful answer is kept 24 hours; a
 * retry with the same key and request gets that answer back; the key reused
 * for another request is 422; a retry while the first is still running is 409.
 * A request that fails changed nothing and charged nothing, so it frees its
 * key and a retry runs afresh.
 *
 * @example
 * const start = await service.idempotency.begin(orgId, key, { method: "POST", path, body });
 * if (start.replay) return start.replay;
 * try { const answer = await run(); await start.complete(answer); } catch (e) { await start.release(); throw e; }
 */
export function createIdempotency(store: IdempotencyStore, { leaseMs, clock = Date.now }: IdempotencyOptions) {
  let prunedAt = 0;

  return {
    async begin(organizationId: number, key: string, request: IdempotentRequest): Promise<IdempotentStart> {
      if (!KEY.test(key)) throw ChatsvcError.badRequest("The Idempotency-Key header must be 1 to 255 visible ASCII characters");
      const at = clock();
      if (at - prunedAt > PRUNE_EVERY_MS) {
        prunedAt = at;
        await store.prune(new Date(at - IDEMPOTENCY_TTL_MS).toISOString());
      }
      const fingerprint = createHash("sha256").update(`${request.method}\n${request.path}\n${request.body}`).digest("base64url");
      const found = await store.claim(organizationId, key, fingerprint, {
        now: new Date(at).toISOString(),
        expiredBefore: new Date(at - IDEMPOTENCY_TTL_MS).toISOString(),
        staleBefore: new Date(at - leaseMs).toISOString(),
      });
      if (found.claimed) {
        return {
          complete: ({ status, body }) => store.complete(organizationId, key, fingerprint, status, body),
          release: () => store.release(organizationId, key, fingerprint),
        };
      }
      const { record } = found;
      if (record.fingerprint !== fingerprint) {
        throw ChatsvcError.validation({ "Idempotency-Key": ["This key was already used with a different request (method, path or body)."] }, "Idempotency-Key reused for a different request");
      }
      if (record.state === "running") {
        throw new ChatsvcError(409, "A request with this Idempotency-Key is still being processed; retry later", { headers: { "retry-after": "1" } });
      }
      return { replay: { status: record.status ?? 200, body: record.body ?? "null" } };
    },
  };
}
