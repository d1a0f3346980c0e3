import { accountInfoSchema } from "../schemas/index.js";
import { ok } from "../envelope.js";
import type { RouteDefinition } from "../router.js";

export const accountRoutes: RouteDefinition[] = [
  {
    method: "GET",
    path: "/auth/test",
    operationId: "authTest",
    tags: ["Account"],
    summary: "Verify an API key",
    description: "Answers the account the key belongs to. Use it to check a key before anything else.",
    response: { data: accountInfoSchema, message: "Authentication successful" },
    handler: ({ principal }) =>
      ok({ user_id: principal.userId, organization_id: principal.organizationId, email: principal.email }, { message: "Authentication successful" }),
  },
];
