import { z } from "zod";
import { buildOpenApiDocument, type OpenApiDocument } from "../openapi.js";
import type { RouteDefinition } from "../router.js";

/**
 * `GET /openapi.json`: the API's OpenAPI document, no key needed. Its server
 * URL is the path the API is mounted at, so the document is right wherever an
 * app mounts it. `routes` is read on first use, as this route is one of them.
 */
export function openApiRoute(routes: () => readonly RouteDefinition[]): RouteDefinition {
  const documents = new Map<string, OpenApiDocument>();
  return {
    method: "GET",
    path: "/openapi.json",
    operationId: "getOpenApiDocument",
    tags: ["Meta"],
    summary: "This API's OpenAPI 3.1 document",
    auth: false,
    response: { envelope: false, data: z.looseObject({ openapi: z.literal("3.1.0") }).meta({ description: "An OpenAPI 3.1 document" }) },
    handler: ({ event }) => {
      const serverUrl = event.url.pathname.replace(/\/openapi\.json$/, "") || "/";
      let document = documents.get(serverUrl);
      if (!document) documents.set(serverUrl, (document = buildOpenApiDocument(routes(), { serverUrl })));
      return document;
    },
  };
}
