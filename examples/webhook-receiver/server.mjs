// Receives chatsvc webhooks and checks their signatures before trusting them.
// Run: WEBHOOK_SECRET=whsec_... node examples/webhook-receiver/server.mjs   (PORT optional)
// Register it: curl -X POST $CHATSVC_URL/webhooks -H "Authorization: Bearer $KEY" -H "content-type: application/json" \
//   -d '{"url":"http://127.0.0.1:4000/","events":["lead_captured","conversation_started","conversation_ended","message_received"]}'
// (a local address needs `chatsvc serve --allow-private-webhooks`)
import { createServer } from "node:http";
import { verifyWebhook } from "chatsvc";

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error("Set WEBHOOK_SECRET to the `secret` that POST /webhooks answered when it created the webhook.");
  process.exit(1);
}

const server = createServer(async (req, res) => {
  if (req.method !== "POST") return res.writeHead(405, { allow: "POST" }).end();
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  // Verify the raw bytes as received: re-serialised JSON would not match the signature.
  const body = Buffer.concat(chunks);
  if (!verifyWebhook(secret, req.headers, body)) {
    console.warn("refused a delivery with a bad or stale signature");
    return res.writeHead(401).end();
  }
  const { event, data } = JSON.parse(body.toString("utf8"));
  // Deliveries are at-least-once: `webhook-id` stays the same across retries, so use it to drop duplicates.
  console.log(`${event} ${req.headers["webhook-id"]} ${JSON.stringify(data)}`);
  res.writeHead(204).end();
});
server.listen(Number(process.env.PORT ?? 4000), "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.once("SIGTERM", () => server.close(() => process.exit(0)));
process.once("SIGINT", () => server.close(() => process.exit(0)));
