/** Field name -> human-readable messages, as sent in a 422 envelope's `errors`. */
export type FieldErrors = Record<string, string[]>;

/**
 * The one error type of chatsvc. Every refusal the service makes is a
 * `ChatsvcError` with the HTTP status it maps to; the HTTP layer turns it into
 * the envelope in one place and the CLI into a message and exit code.
 *
 * @example
 * throw new ChatsvcError(404, "Conversation not found");
 * throw ChatsvcError.validation({ email: ["The email must be a valid email address."] });
 */
export class ChatsvcError extends Error {
  override readonly name = "ChatsvcError";
  readonly status: number;
  readonly errors?: FieldErrors;
  /** Extra fields merged into the error envelope (e.g. `conversation_id` on a model failure). */
  readonly details?: Record<string, unknown>;
  /** Response headers the error must carry (e.g. `Retry-After`). */
  readonly headers?: Record<string, string>;

  constructor(
    status: number,
    message: string,
    options: { errors?: FieldErrors; details?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    if (options.errors) this.errors = options.errors;
    if (options.details) this.details = options.details;
    if (options.headers) this.headers = options.headers;
  }

  static isError(value: unknown): value is ChatsvcError {
    return value instanceof ChatsvcError;
  }

  /** 422 with a field map; the message names the first problem, as clients often show only that. */
  static validation(errors: FieldErrors, message?: string): ChatsvcError {
    const first = Object.values(errors)[0]?.[0];
    return new ChatsvcError(422, message ?? first ?? "The given data was invalid.", { errors });
  }

  static badRequest(message: string): ChatsvcError {
    return new ChatsvcError(400, message);
  }

  static unauthorized(message: string): ChatsvcError {
    return new ChatsvcError(401, message);
  }

  static forbidden(message = "You do not have access to this resource"): ChatsvcError {
    return new ChatsvcError(403, message);
  }

  static notFound(message = "Not found"): ChatsvcError {
    return new ChatsvcError(404, message);
  }
}
