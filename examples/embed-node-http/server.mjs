// chatsvc's API served by a plain node:http server: the app strips the /api/v1 prefix itself.
// Run: node examples/embed-node-http/server.mjs   (PORT, CHATSVC_DB optional)
import { createServer } from "node:http";
import { toNodeHandler } from "h3/node";
import { createChatService } from "chatsvc";
import { createApiApp } from "chatsvc/h3";

const PREFIX = "/api/v1";
const service = await createChatService({ db: process.env.CHATSVC_DB ?? "./.chatsvc/chatsvc.db" });
if (await service.isEmpty()) {
  const { key } = await service.bootstrap();
  console.log(`First run: created the "demo" chatbot and an API key, shown only now:\n  ${key.key}`);
}
const chatApi = toNodeHandler(createApiApp(service));

const server = createServer((req, res) => {
  if (req.url === PREFIX || req.url.startsWith(`${PREFIX}/`)) {
    req.url = req.url.slice(PREFIX.length) || "/";
    return chatApi(req, res);
  }
  res.writeHead(200, { "content-type": "text/plain" }).end(`My node:http app; the chat API is under ${PREFIX}\n`);
});
server.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${server.address().port}`));

const stop = () => server.close(() => void service.close().then(() => process.exit(0)));
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
