import { ok } from "../envelope.js";
import type { RouteDefinition } from "../router.js";

export const accountRoutes: RouteDefinition[] = [
  {
    method: "GET",
    path: "/auth/test",
    summary: "Verify an API key",
    handler: ({ principal }) =>
      ok({ user_id: principal.userId, organization_id: principal.organizationId, email: principal.email }, { message: "Authentication successful" }),
  },
];
