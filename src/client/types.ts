import type { CreditMeta, HumanHandledData, PageLinks, PageMeta, ReplyData } from "./api-types.js";

/** A successful answer: the envelope with its `data`. */
export interface Ok<D> {
  success: true;
  message?: string;
  data: D;
}

/** A successful answer that always carries `meta`. */
export interface OkWithMeta<D, M> extends Ok<D> {
  meta: M;
}

/** One page of a list, newest first, with `meta` (positions, totals) and `links` (path and query, e.g. `/api/v1/leads?page=2&per_page=20`, or absolute URLs when the server has a `publicUrl`). */
export interface PageOf<T> extends Ok<T[]> {
  meta: PageMeta;
  links: PageLinks;
}

/**
 * An event of a streamed reply: pieces of text as the model writes them (Markdown), then the full answer
 * (no pieces and `data.reply` null while a person handles the conversation).
 */
export type ReplyStreamEvent = { type: "delta"; text: string } | { type: "done"; data: ReplyData | HumanHandledData; meta: CreditMeta };

/** Options every call takes. */
export interface RequestOptions {
  /** Aborts the request (for a stream: closes it, and the service stops generating and stores nothing). */
  signal?: AbortSignal;
}

/** Options of the calls that create or charge. */
export interface IdempotentOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key`: retrying the call with the same key and arguments (within 24 hours)
   * answers the first success again instead of acting twice. Use a new random key (e.g.
   * `crypto.randomUUID()`) per intended action and keep it across your retries.
   */
  idempotencyKey?: string;
}
