import { z } from "zod";
import { ChatsvcError, type FieldErrors } from "./errors.js";

/*
 * Request schemas are zod schemas: the same definitions validate input here and
 * describe it in the OpenAPI document. These helpers give every field the
 * messages and rules DESIGN.md fixes (code-point lengths, well-formed UTF-16).
 */

const label = (field: string) => field.replace(/_/g, " ");

/** Length in Unicode code points, so an emoji counts once. */
export function codePointLength(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

export interface TextRules {
  min?: number;
  max?: number;
}

/** The refusal of a field holding U+0000, which no text needs and which C-string consumers cut at. */
export const noNul = (field: string) => `The ${label(field)} field must not contain NUL characters.`;

/** True when a JSON value holds U+0000 in any string, keys included. */
export function containsNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\0");
  if (value === null || typeof value !== "object") return false;
  for (const [key, child] of Object.entries(value)) if (key.includes("\0") || containsNul(child)) return true;
  return false;
}

/** A string field: well-formed UTF-16 without NUL, trimmed length rules counted in code points. */
export function text(field: string, { min = 0, max = 1000 }: TextRules = {}) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `The ${label(field)} field is required.` : `The ${label(field)} field must be a string.`) })
    .refine((s) => s.isWellFormed(), { message: `The ${label(field)} field must be valid UTF-8 text.`, abort: true })
    .refine((s) => !s.includes("\0"), { message: noNul(field), abort: true })
    .refine((s) => codePointLength(s.trim()) >= min, {
      message: min <= 1 ? `The ${label(field)} field is required.` : `The ${label(field)} field must be at least ${min} characters.`,
      abort: true,
    })
    .refine((s) => codePointLength(s) <= max, { message: `The ${label(field)} field must not be greater than ${max} characters.` })
    // Refinements are invisible to JSON Schema; JSON Schema lengths count code points too.
    .meta({ ...(min > 0 && { minLength: min }), maxLength: max });
}

/** An e-mail address (pragmatic: one `@`, a dot in the domain, no spaces). */
export function email(field = "email") {
  return text(field, { max: 254 }).refine((s) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s), {
    message: `The ${label(field)} field must be a valid email address.`,
  }).meta({ format: "email" });
}

/** A positive integer id, accepting only real JSON integers. */
export function id(field: string) {
  return z
    .number({ error: (issue) => (issue.input === undefined ? `The ${label(field)} field is required.` : `The ${label(field)} field must be an integer.`) })
    .int({ message: `The ${label(field)} field must be an integer.` })
    .positive({ message: `The ${label(field)} field must be a positive integer.` })
    .max(Number.MAX_SAFE_INTEGER, { message: `The ${label(field)} field must be a positive integer.` });
}

/** One of a fixed set of strings. */
export function oneOf<const T extends readonly [string, ...string[]]>(field: string, values: T) {
  return z.enum(values, {
    error: (issue) =>
      issue.input === undefined
        ? `The ${label(field)} field is required.`
        : `The ${label(field)} field must be one of: ${values.join(", ")}.`,
  });
}

/**
 * A JSON object body; anything else (array, string, null) is a 422 on `body`.
 * Unknown fields are ignored, so clients written against a newer version keep working.
 */
export function body<T extends z.ZodRawShape>(shape: T) {
  return z.object(shape, { error: "The request body must be a JSON object." });
}

/** Turns zod issues into the `{field: [messages]}` map of the 422 envelope. */
export function toFieldErrors(error: z.ZodError): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) {
    const key = issue.path.map(String).join(".") || "body";
    const list = (errors[key] ??= []);
    if (!list.includes(issue.message)) list.push(issue.message);
  }
  return errors;
}

/**
 * Validates input against a schema, throwing a 422 {@link ChatsvcError} that
 * names each failed field.
 */
export function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw ChatsvcError.validation(toFieldErrors(result.error));
  return result.data;
}
