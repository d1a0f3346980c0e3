import type { FieldErrors } from "./api-types.js";

/**
 * A refusal or failure the API answered with: the HTTP status, the envelope's `message`, the field `errors` of a 422,
 * and any other envelope fields as `details` (e.g. `conversation_id` on a model failure). The client's own class, so
 * its declarations need nothing from the server; it has the same name and fields as the service's `ChatsvcError`.
 *
 * @example
 * try { await chatsvc.chatbots.send("demo", id, text); } catch (e) { if (e instanceof ChatsvcError && e.status === 429) wait(); }
 */
export class ChatsvcError extends Error {
  override readonly name = "ChatsvcError";
  readonly status: number;
  readonly errors?: FieldErrors;
  readonly details?: Record<string, unknown>;
  /** Headers worth acting on, e.g. `retry-after` on a 429. */
  readonly headers?: Record<string, string>;

  constructor(status: number, message: string, options: { errors?: FieldErrors; details?: Record<string, unknown>; headers?: Record<string, string> } = {}) {
    super(message);
    this.status = status;
    if (options.errors) this.errors = options.errors;
    if (options.details) this.details = options.details;
    if (options.headers) this.headers = options.headers;
  }
}
