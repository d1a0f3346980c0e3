import { createHash } from "node:crypto";
import { ChatsvcError } from "../core/errors.js";

/** What clients see when a model call fails (spec: 500, retry once). */
export const MODEL_FAILED_MESSAGE = "The model provider failed; retry once";

/**
 * Why a model call failed: the provider answered with an error or could not be
 * reached (`failed`), took longer than allowed (`timeout`), was cancelled by
 * the caller (`aborted`), or answered something that is not a usable reply
 * (`malformed`: not the wire format, missing fields, empty text).
 */
export type ModelFailureKind = "failed" | "timeout" | "aborted" | "malformed";

/**
 * A model call that gave no usable answer. It is a {@link ChatsvcError} (500
 * with the spec's message) so that it answers correctly even where nobody
 * catches it; the chat pipeline adds the conversation id. `reason` is for
 * operators' logs and is never sent to clients, as it can name internal hosts.
 *
 * @example
 * try { await model.chat(request) } catch (e) {
 *   if (isModelError(e) && e.kind === "timeout") log.warn(e.reason);
 * }
 */
export class ModelError extends ChatsvcError {
  readonly kind: ModelFailureKind;
  /** Model spec, e.g. `ollama:llama3.2`. */
  readonly model: string;
  readonly reason: string;
  /** HTTP status the provider answered with, when it answered with an error. */
  readonly providerStatus?: number;

  constructor(model: string, kind: ModelFailureKind, reason: string, options: { cause?: unknown; providerStatus?: number } = {}) {
    super(500, MODEL_FAILED_MESSAGE, { cause: options.cause });
    this.kind = kind;
    this.model = model;
    this.reason = reason;
    if (options.providerStatus !== undefined) this.providerStatus = options.providerStatus;
  }
}

/**
 * True for the error every provider throws when a call fails.
 *
 * @example
 * if (isModelError(error)) throw new ChatsvcError(500, error.message, { details: { conversation_id } });
 */
export function isModelError(value: unknown): value is ModelError {
  return value instanceof ModelError;
}

/**
 * Turns whatever a provider call threw into a {@link ModelError}. When the
 * call's signal fired, its reason decides between `timeout` and `aborted`,
 * whatever the client library made of the abort.
 *
 * @example
 * try { ... } catch (error) { throw toModelError(error, "ollama:llama3.2", signal) }
 */
export function toModelError(error: unknown, model: string, signal?: AbortSignal): ModelError {
  if (isModelError(error)) return error;
  if (signal?.aborted) return abortError(model, signal.reason, error);
  const name = (error as { name?: unknown } | null)?.name;
  if (name === "TimeoutError" || name === "AbortError") return abortError(model, error, error);
  // Not the parser's message: V8 quotes the text around the error, which can be what the visitor wrote.
  if (error instanceof SyntaxError) return new ModelError(model, "malformed", "Answer is not valid JSON", { cause: error });
  return new ModelError(model, "failed", describe(error), { cause: error });
}

/**
 * Names text a provider sent that could not be parsed, for a reason: its
 * length and the start of its SHA-256, enough to tell answers apart in logs.
 * Never the text, which can carry what the visitor wrote (models and
 * gateways echo it).
 *
 * @example
 * throw new ModelError(spec, "malformed", `Answer is not JSON (${fingerprint(raw)})`);
 * // reason: "Answer is not JSON (42 characters, sha256 1f2e3d4c5b6a)"
 */
export function fingerprint(text: string): string {
  return `${text.length} characters, sha256 ${createHash("sha256").update(text).digest("hex").slice(0, 12)}`;
}

function abortError(model: string, reason: unknown, cause: unknown): ModelError {
  const timedOut = (reason as { name?: unknown } | null)?.name === "TimeoutError";
  return timedOut
    ? new ModelError(model, "timeout", "The model call timed out", { cause })
    : new ModelError(model, "aborted", "The model call was cancelled", { cause });
}

/** A one-line reason, including the network error code undici hides in `cause` (ECONNREFUSED, ...). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = cause?.code ?? cause?.message;
  return detail && !error.message.includes(String(detail)) ? `${error.message} (${String(detail)})` : error.message;
}
