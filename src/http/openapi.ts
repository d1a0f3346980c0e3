import { z } from "zod";
import { version } from "../core/version.js";
import { errorEnvelope, successEnvelope, validationErrorEnvelope } from "./envelope-schemas.js";
import type { RouteDefinition } from "./router.js";

type JsonSchema = Record<string, unknown>;

/** An OpenAPI 3.1 document, as plain JSON. */
export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  security: Record<string, string[]>[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, unknown>; headers: Record<string, unknown> };
}

export interface OpenApiOptions {
  /** The API root as clients reach it. Default `/api/v1` (relative to the document's host). */
  serverUrl?: string;
}

const DESCRIPTION = `Chatbots that answer visitors from a knowledge base.

Every endpoint except this document needs an API key: \`Authorization: Bearer sk_live_...\` (recommended) or \`X-API-Key: sk_live_...\`. Keep the key on your server; browsers and apps talk to your backend, which calls this API.

Every answer is a JSON envelope: \`{success, message?, data, meta?, links?}\` on success, \`{success: false, message, errors?}\` on failure, where \`errors\` names each failed field on a 422.

Assistant replies are HTML. Render them unmodified: while branding is required they carry an attribution element (class \`svc-branding\`) that must stay visible. Escape visitor text before rendering it.

A 500 stores nothing: retry once.`;

const TAGS = [
  { name: "Account", description: "The API key's account" },
  { name: "Chatbots", description: "Build a chat interface: chatbot configuration, conversations, messages, leads" },
  { name: "Conversations", description: "Account level: read, add to, hand to a person and back, and end any conversation of the organisation" },
  { name: "Corrections", description: "Answer corrections: questions a chatbot answers with a stored answer instead of the model" },
  { name: "Leads", description: "Contact details captured in conversations" },
  { name: "Analytics", description: "Account level: counts per day or week, unanswered questions, cited documents" },
  { name: "Privacy", description: "Exports, visitor erasure and the audit log of erasures and retention" },
  { name: "Webhooks", description: "Signed HTTP callbacks for lead_captured, conversation_started, conversation_ended, message_received, budget_exhausted, handoff_requested" },
  { name: "Samples", description: "Example objects for testing integrations" },
  { name: "Meta", description: "This document" },
];

/** Headers of the answers, referenced from every response (`Retry-After` from 429s and 409s only). */
const HEADERS = {
  "X-Request-Id": {
    description: "The request's id, as in the server's log line: yours when you sent one of at most 128 of `A-Za-z0-9._:-`, else a new UUID",
    required: true,
    schema: { type: "string" },
  },
  "X-RateLimit-Limit": { description: "Size of the rate-limit bucket closest to empty (absent when rate limits are off)", schema: { type: "integer" } },
  "X-RateLimit-Remaining": { description: "Requests left in that bucket", schema: { type: "integer" } },
  "X-RateLimit-Reset": { description: "Seconds until that bucket is full again", schema: { type: "integer" } },
  "Retry-After": { description: "Seconds to wait before trying again: on a rate-limit 429 (not the monthly-credit one) and a 409 for an `Idempotency-Key` still in use", schema: { type: "integer" } },
};
const headerRefs = (names: (keyof typeof HEADERS)[]) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
const ANSWER_HEADERS = headerRefs(["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]);
const RETRY_HEADERS = headerRefs(["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"]);

const CONTENT_DISPOSITION = {
  description: "`attachment` with a file name, e.g. `attachment; filename=\"conversations-2025-01-31.jsonl\"`",
  required: true,
  schema: { type: "string" },
};

const SSE_DESCRIPTION =
  "Server-Sent Events: `event: delta` with data `{text}` while the model writes, then `event: done` with the JSON envelope, or `event: error` with an error envelope.";

/**
 * The OpenAPI 3.1 document of the given routes, generated from their
 * definitions: the zod schemas the core validates requests with (as JSON
 * Schema of their input) and the response schemas real answers are tested
 * against. Named schemas (zod metadata `id`) become `components.schemas`.
 *
 * @example
 * import { apiRoutes } from "chatsvc/h3";
 * const document = buildOpenApiDocument(apiRoutes, { serverUrl: "https://chat.example.com/api/v1" });
 */
export function buildOpenApiDocument(routes: readonly RouteDefinition[], { serverUrl = "/api/v1" }: OpenApiOptions = {}): OpenApiDocument {
  const schemas: Record<string, JsonSchema> = {};
  const toSchema = (schema: z.ZodType, io: "input" | "output") => convert(schema, io, schemas);
  const paths: OpenApiDocument["paths"] = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    const operations = (paths[path] ??= {});
    if (operations[route.method.toLowerCase()]) throw new Error(`chatsvc: ${route.method} ${route.path} is defined twice`);
    operations[route.method.toLowerCase()] = operation(route, toSchema);
  }
  return {
    openapi: "3.1.0",
    info: { title: "chatsvc API", version, description: DESCRIPTION },
    servers: [{ url: serverUrl }],
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
    tags: TAGS.filter((tag) => routes.some((route) => route.tags.includes(tag.name))),
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
      headers: HEADERS,
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "An API key (`sk_live_` + 32 characters)" },
        apiKeyHeader: { type: "apiKey", in: "header", name: "X-API-Key", description: "The same API key, for clients that cannot set Authorization" },
      },
    },
  };
}

function operation(route: RouteDefinition, toSchema: (schema: z.ZodType, io: "input" | "output") => JsonSchema) {
  const op: Record<string, unknown> = {
    operationId: route.operationId,
    tags: route.tags,
    summary: route.summary,
    ...(route.description && { description: route.description }),
  };
  if (route.auth === false) op.security = [];
  const parameters = [...pathParameters(route, toSchema), ...queryParameters(route, toSchema), ...(route.idempotent ? [IDEMPOTENCY_KEY_PARAMETER] : [])];
  if (parameters.length > 0) op.parameters = parameters;
  if (route.body) {
    op.requestBody = { required: !route.optionalBody, content: { "application/json": { schema: toSchema(route.body, "input") } } };
  }
  op.responses = { ...successResponses(route, toSchema), ...errorResponses(route, toSchema) };
  return op;
}

const IDEMPOTENCY_KEY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Makes a retry safe: the first request with a key runs, and its successful answer is kept 24 hours for your organisation; a retry with the same key, path and body gets that status and body back with `Idempotency-Replayed: true` (a streamed send's replay is its JSON envelope). " +
    "A failed request frees its key, so a retry runs again. Any unique string, e.g. a UUID.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" },
};

function pathParameters(route: RouteDefinition, toSchema: (schema: z.ZodType, io: "input") => JsonSchema) {
  return [...route.path.matchAll(/:(\w+)/g)].map(([, name]) => {
    const schema = route.params?.[name!];
    if (!schema) throw new Error(`chatsvc: ${route.method} ${route.path} has no schema for its path parameter ${name}`);
    const { description, ...rest } = toSchema(schema, "input");
    return { name, in: "path", required: true, ...(description !== undefined && { description }), schema: rest };
  });
}

function queryParameters(route: RouteDefinition, toSchema: (schema: z.ZodType, io: "input") => JsonSchema) {
  if (!route.query) return [];
  const object = toSchema(route.query, "input") as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, { description, ...schema }]) => ({
    name,
    in: "query",
    required: object.required?.includes(name) ?? false,
    ...(description !== undefined && { description }),
    schema,
  }));
}

function successResponses(route: RouteDefinition, toSchema: (schema: z.ZodType, io: "output") => JsonSchema) {
  const { response } = route;
  const statuses = response.status === undefined ? [200] : typeof response.status === "number" ? [response.status] : response.status;
  const content = response.download
    ? Object.fromEntries(Object.entries(response.download).map(([type, description]) => [type, { schema: { type: "string", description } }]))
    : route.stream
      ? { "text/event-stream": { schema: { type: "string", description: SSE_DESCRIPTION } } }
      : { "application/json": { schema: toSchema(successEnvelope(response), "output") } };
  const headers = response.download ? { ...ANSWER_HEADERS, "Content-Disposition": CONTENT_DISPOSITION } : ANSWER_HEADERS;
  return Object.fromEntries(
    statuses.map((status) => [String(status), { description: response.description ?? (status === 201 ? "Created" : "Success"), headers, content }]),
  );
}

function errorResponses(route: RouteDefinition, toSchema: (schema: z.ZodType, io: "output") => JsonSchema) {
  const causes: Record<number, string> = {};
  if (route.auth !== false) causes[401] = "The API key is missing, malformed, unknown, disabled or expired";
  if (route.body) {
    causes[400] = "The body is not valid JSON";
    causes[413] = "The body is larger than 1 MB";
    causes[415] = "The body's `Content-Type` is not JSON (`application/json`)";
  }
  if (route.body || route.query) causes[422] = `Invalid ${route.body ? "body" : "query"}: \`errors\` names each failed field`;
  for (const [status, cause] of Object.entries(route.errors ?? {})) {
    const code = Number(status);
    causes[code] = causes[code] ? `${causes[code]}; or: ${cause}` : cause!;
  }
  if (route.idempotent) {
    const reuse = "The `Idempotency-Key` was used with a different request (method, path or body)";
    causes[400] = causes[400] ? `${causes[400]}; or: a malformed \`Idempotency-Key\`` : "A malformed `Idempotency-Key`";
    causes[409] = "A request with this `Idempotency-Key` is still being processed: retry after `Retry-After` seconds";
    causes[422] = causes[422] ? `${causes[422]}; or: ${reuse}` : reuse;
  }
  causes[429] = causes[429] ? `${causes[429]}; or: too many requests (rate limit), retry after \`Retry-After\` seconds` : "Too many requests (rate limit): retry after `Retry-After` seconds";
  causes[500] = "An unexpected failure (nothing was stored): retry once";
  const ref = (schema: z.ZodType) => ({ "application/json": { schema: toSchema(schema, "output") } });
  return Object.fromEntries(
    Object.entries(causes)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([status, description]) => [
        status,
        { description, headers: status === "429" || status === "409" ? RETRY_HEADERS : ANSWER_HEADERS, content: ref(status === "422" ? validationErrorEnvelope : errorEnvelope) },
      ]),
  );
}

const SAFE_BOUND = Number.MAX_SAFE_INTEGER;

/**
 * One zod schema as OpenAPI's JSON Schema (draft 2020-12). Named schemas move
 * to `components.schemas` (a name used for two different schemas is a bug and
 * throws); references are rewritten to point there.
 */
function convert(schema: z.ZodType, io: "input" | "output", components: Record<string, JsonSchema>): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io,
    target: "draft-2020-12",
    override: ({ zodSchema, jsonSchema }) => {
      // A transform from a union declares the type it accepts in its metadata; the union is noise there.
      if (z.globalRegistry.get(zodSchema as never)?.type !== undefined) delete jsonSchema.anyOf;
      // z.int() bounds every integer by the safe range, which says nothing to a reader.
      if (jsonSchema.minimum === -SAFE_BOUND) delete jsonSchema.minimum;
      if (jsonSchema.maximum === SAFE_BOUND) delete jsonSchema.maximum;
    },
  }) as JsonSchema;
  const { $schema: _, $defs, ...root } = json as JsonSchema & { $defs?: Record<string, JsonSchema> };
  for (const [name, def] of Object.entries($defs ?? {})) {
    const rewritten = rewriteRefs(def) as JsonSchema;
    const existing = components[name];
    if (existing && JSON.stringify(existing) !== JSON.stringify(rewritten)) {
      throw new Error(`chatsvc: two different schemas are both named ${name} in the OpenAPI document`);
    }
    components[name] = rewritten;
  }
  return rewriteRefs(root) as JsonSchema;
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      key === "$ref" && typeof v === "string" ? v.replace(/^#\/\$defs\//, "#/components/schemas/") : rewriteRefs(v),
    ]),
  );
}
