// Baseline: an h3 v2 JSON endpoint served exactly the way `chatsvc serve`
// serves its app (src/http/server.ts: node:http with the same timeouts,
// toNodeHandler, the API mounted at /api/v1), with nothing else.
import { createServer } from "node:http";
import { H3 } from "h3";
import { toNodeHandler } from "h3/node";

const api = new H3().get("/auth/test", () => ({
  success: true,
  message: "Authentication successful",
  data: { user_id: 1, organization_id: 1, email: "owner@example.com" },
}));
const app = new H3().mount("/api/v1", api);
const server = createServer({ requestTimeout: 30_000, headersTimeout: 20_000, keepAliveTimeout: 5_000, connectionsCheckingInterval: 1_000 }, toNodeHandler(app));
server.listen(0, "127.0.0.1", () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
