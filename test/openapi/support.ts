import { expect } from "vitest";
import { apiRoutes } from "../../src/h3.js";
import { errorEnvelope, successEnvelope } from "../../src/http/envelope-schemas.js";
import type { RouteDefinition } from "../../src/http/router.js";
import type { ApiResponse, Harness } from "../support/harness.js";

export const routeById = (operationId: string): RouteDefinition => {
  const route = apiRoutes.find((r) => r.operationId === operationId);
  if (!route) throw new Error(`no route ${operationId}`);
  return route;
};

/** The route's path with its `:params` filled in. */
export const pathOf = (route: RouteDefinition, params: Record<string, string | number> = {}) =>
  route.path.replace(/:(\w+)/g, (_, name: string) => {
    if (params[name] === undefined) throw new Error(`${route.operationId} needs ${name}`);
    return encodeURIComponent(String(params[name]));
  });

const successStatuses = (route: RouteDefinition) => {
  const status = route.response.status ?? 200;
  return typeof status === "number" ? [status] : [...status];
};

/**
 * Calls routes by operation id over the harness's real socket and checks each
 * answer against the route's documented schemas: a success must parse with
 * the strict success envelope and use a documented status; an error must be
 * the error envelope with a status the document lists for the route.
 */
export function createRouteCaller(h: Harness, document: { paths: Record<string, Record<string, any>> }) {
  const succeeded = new Set<string>();
  const call = async (
    operationId: string,
    { params, query, ...init }: { params?: Record<string, string | number>; query?: Record<string, string> } & Parameters<Harness["call"]>[1] = {},
  ): Promise<ApiResponse> => {
    const route = routeById(operationId);
    const search = query ? `?${new URLSearchParams(query)}` : "";
    const res = await h.call(`${pathOf(route, params)}${search}`, { ...init, method: route.method });
    const documented = document.paths[route.path.replace(/:(\w+)/g, "{$1}")]![route.method.toLowerCase()].responses as Record<string, unknown>;
    expect(Object.keys(documented), `${operationId} answered ${res.status}: ${res.text.slice(0, 300)}`).toContain(String(res.status));
    // The headers the document promises on every answer, and Retry-After on a rate-limit 429.
    const response = (documented as Record<string, { headers: Record<string, unknown> }>)[String(res.status)]!;
    for (const name of Object.keys(response.headers)) {
      if (name !== "Retry-After" || /Too many/.test(res.body?.message)) expect(res.headers.get(name), `${operationId} ${res.status}: ${name}`).not.toBeNull();
    }
    if (res.status < 400) {
      expect(successStatuses(route)).toContain(res.status);
      if (route.response.download) {
        // A streamed file: its media type must be one the document lists.
        const documentedTypes = Object.keys((response as unknown as { content: Record<string, unknown> }).content);
        expect(documentedTypes, `${operationId}: ${res.headers.get("content-type")}`).toContain(res.headers.get("content-type")?.split(";")[0]);
      } else {
        const parsed = successEnvelope(route.response).safeParse(res.body);
        expect(parsed.error?.issues ?? [], `${operationId}: ${res.text.slice(0, 500)}`).toEqual([]);
      }
      succeeded.add(operationId);
    } else {
      const parsed = errorEnvelope.safeParse(res.body);
      expect(parsed.error?.issues ?? [], `${operationId}: ${res.text}`).toEqual([]);
    }
    return res;
  };
  return { call, succeeded };
}
