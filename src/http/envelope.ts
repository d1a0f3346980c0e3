import type { FieldErrors } from "../core/errors.js";
import { pageLinks, type Page } from "../core/pagination.js";

/** The response envelope of every endpoint. */
export interface Envelope<T = unknown> {
  success: boolean;
  message?: string;
  data?: T;
  meta?: Record<string, unknown>;
  links?: Record<string, string | null>;
}

export interface ErrorEnvelope {
  success: false;
  message: string;
  errors?: FieldErrors;
  [detail: string]: unknown;
}

/** A success envelope; `message`, `meta` and `links` only when given. */
export function ok<T>(data: T, extra: Omit<Envelope<T>, "success" | "data"> = {}): Envelope<T> {
  return { success: true, ...(extra.message !== undefined && { message: extra.message }), data, ...(extra.meta && { meta: extra.meta }), ...(extra.links && { links: extra.links }) };
}

/** A success envelope for one page of a list: its rows, `meta`, and `links` to the list at `url` (see {@link pageLinks}). */
export function okPage<T>(page: Page<T>, url: URL, options: { publicUrl?: string } = {}): Envelope<T[]> {
  return ok(page.data, { meta: { ...page.meta }, links: { ...pageLinks(url, page.meta, options) } });
}
