import { z } from "zod";
import { ChatsvcError, type FieldErrors } from "./errors.js";

export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 100;

/** What list endpoints accept; numbers may come as query-string digits. */
export interface PageQuery {
  page?: number | string;
  per_page?: number | string;
  /** Chatbot slug of the caller's organisation. */
  chatbot?: string;
  /** ISO 8601 timestamp: only records created at or after it. */
  since?: string;
  /** ISO 8601 timestamp: only records created before it. */
  until?: string;
}

/** `meta` of a list response. */
export interface PageMeta {
  current_page: number;
  per_page: number;
  total: number;
  last_page: number;
  from: number | null;
  to: number | null;
}

/** `links` of a list response: path and query (absolute on `publicUrl` when configured), null where there is no such page. */
export interface PageLinks {
  first: string;
  last: string;
  prev: string | null;
  next: string | null;
}

/** One page of a list, newest first. */
export interface Page<T> {
  data: T[];
  meta: PageMeta;
}

const positive = (field: string, max: number) =>
  z
    .union([z.number(), z.string()], { error: `The ${field.replace(/_/g, " ")} field must be an integer.` })
    .transform((v, ctx) => {
      const n = typeof v === "number" ? v : /^\d{1,9}$/.test(v.trim()) ? Number(v.trim()) : NaN;
      if (!Number.isInteger(n) || n < 1 || n > max) {
        ctx.addIssue({ code: "custom", message: `The ${field.replace(/_/g, " ")} field must be an integer from 1 to ${max}.` });
        return z.NEVER;
      }
      return n;
    })
    // Query values arrive as strings; the document describes the integer they must spell.
    .meta({ type: "integer", minimum: 1, maximum: max });

// A full ISO 8601 date or date-time; `Date.parse` alone accepts too many shapes.
const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const timestamp = (field: string) =>
  z.string({ error: `The ${field} field must be an ISO 8601 date or date-time.` }).transform((s, ctx) => {
    const t = s.trim();
    if (!ISO.test(t) || Number.isNaN(Date.parse(t))) {
      ctx.addIssue({ code: "custom", message: `The ${field} field must be an ISO 8601 date or date-time.` });
      return z.NEVER;
    }
    return new Date(t).toISOString();
  }).meta({ description: "ISO 8601 date or date-time, e.g. 2025-01-31 or 2025-01-31T12:00:00Z" });

/** The shared query schema of list endpoints; callers extend it with their own filters. */
export const pageQueryShape = {
  page: positive("page", 1_000_000).optional(),
  per_page: positive("per_page", MAX_PER_PAGE).optional(),
  chatbot: z
    .string({ error: "The chatbot field must be a chatbot slug." })
    .min(1, { message: "The chatbot field must be a chatbot slug." })
    .meta({ description: "Only records of this chatbot (slug)" })
    .optional(),
  since: timestamp("since").optional(),
  until: timestamp("until").optional(),
};

/** Refuses a `since` after `until`, which can only be a caller's mistake. */
export function checkRange(range: { since?: string; until?: string }): void {
  if (range.since && range.until && range.since > range.until) {
    const errors: FieldErrors = { since: ["The since field must be a date before until."] };
    throw ChatsvcError.validation(errors);
  }
}

/**
 * `meta` for a page: `from`/`to` are 1-based positions of its first and last
 * record, null on an empty page.
 *
 * @example
 * pageMeta({ page: 2, perPage: 20, total: 45, count: 20 }) // { current_page: 2, ..., last_page: 3, from: 21, to: 40 }
 */
export function pageMeta({ page, perPage, total, count }: { page: number; perPage: number; total: number; count: number }): PageMeta {
  const offset = (page - 1) * perPage;
  return {
    current_page: page,
    per_page: perPage,
    total,
    last_page: Math.max(1, Math.ceil(total / perPage)),
    from: count > 0 ? offset + 1 : null,
    to: count > 0 ? offset + count : null,
  };
}

/**
 * Page links for the list at `url`: other query parameters (filters) are
 * kept, `page` and `per_page` are set. Absolute on `publicUrl` when given,
 * else path and query only: never on the request's host, which the client
 * writes (`Host: evil.example` would send a client that follows links, and
 * its key, there).
 *
 * @example
 * pageLinks(new URL("http://127.0.0.1/api/v1/leads?chatbot=demo"), meta).next // "/api/v1/leads?chatbot=demo&page=2&per_page=20"
 * pageLinks(url, meta, { publicUrl: "https://chat.example.com" }).next // "https://chat.example.com/api/v1/leads?chatbot=demo&page=2&per_page=20"
 */
export function pageLinks(url: URL, meta: PageMeta, { publicUrl = "" }: { publicUrl?: string } = {}): PageLinks {
  // One leading slash: `//host/...` is a protocol-relative URL naming another host.
  const path = url.pathname.replace(/^\/+/, "/");
  const to = (page: number) => {
    const query = new URLSearchParams(url.search);
    query.set("page", String(page));
    query.set("per_page", String(meta.per_page));
    return `${publicUrl}${path}?${query}`;
  };
  return {
    first: to(1),
    last: to(meta.last_page),
    prev: meta.current_page > 1 ? to(Math.min(meta.current_page - 1, meta.last_page)) : null,
    next: meta.current_page < meta.last_page ? to(meta.current_page + 1) : null,
  };
}
