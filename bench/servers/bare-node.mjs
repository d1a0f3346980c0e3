// Baseline: the least a Node JSON endpoint can cost (node:http, no framework).
import { createServer } from "node:http";

const body = JSON.stringify({ success: true, message: "Authentication successful", data: { user_id: 1, organization_id: 1, email: "owner@example.com" } });
const server = createServer((req, res) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
});
server.keepAliveTimeout = 5_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
