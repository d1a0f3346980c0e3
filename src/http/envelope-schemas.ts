import { z } from "zod";
import type { RouteResponse } from "./router.js";

/**
 * The body a route answers on success, as a schema: its `data`, `meta` and
 * `links` schemas wrapped in the envelope (strict, like the resources).
 *
 * @example
 * successEnvelope({ data: chatbotDetailSchema }).parse(await res.json());
 */
export function successEnvelope(response: RouteResponse): z.ZodType {
  if (response.envelope === false) return response.data;
  return z.strictObject({
    success: z.literal(true),
    ...(response.message !== undefined && { message: z.literal(response.message) }),
    data: response.data,
    ...(response.meta && { meta: response.meta }),
    ...(response.links && { links: response.links }),
  });
}

/** The error envelope: `success` false, a message, and sometimes details such as `conversation_id`. */
export const errorEnvelope = z
  .looseObject({
    success: z.literal(false),
    message: z.string(),
    errors: z.record(z.string(), z.array(z.string())).optional(),
  })
  .meta({ id: "Error", description: "Failure: `message` says what went wrong; extra fields (e.g. `conversation_id`) may add details" });

/** The 422 envelope, whose `errors` names each failed field. */
export const validationErrorEnvelope = errorEnvelope
  .extend({
    errors: z.record(z.string(), z.array(z.string())).meta({ description: "Each failed field (dotted path, or `body`) with its messages" }),
  })
  .meta({ id: "ValidationError" });
