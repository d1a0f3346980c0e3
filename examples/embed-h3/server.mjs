// chatsvc's API inside an existing h3 app, next to the app's own routes.
// Run: node examples/embed-h3/server.mjs   (PORT, CHATSVC_DB optional)
import { H3 } from "h3";
import { serve } from "h3/node";
import { createChatService } from "chatsvc";
import { createApiApp } from "chatsvc/h3";

const service = await createChatService({ db: process.env.CHATSVC_DB ?? "./.chatsvc/chatsvc.db" });
if (await service.isEmpty()) {
  const { key } = await service.bootstrap();
  console.log(`First run: created the "demo" chatbot and an API key, shown only now:\n  ${key.key}`);
}

const app = new H3();
app.get("/", () => ({ app: "my h3 app", chat_api: "/api/v1" }));
app.mount("/api/v1", createApiApp(service));

const server = serve(app, { port: Number(process.env.PORT ?? 3000), hostname: "127.0.0.1", silent: true });
await server.ready();
console.log(`listening on ${server.url.replace(/\/$/, "")}`);

process.once("SIGTERM", () => void server.close().then(() => service.close()).then(() => process.exit(0)));
process.once("SIGINT", () => void server.close().then(() => service.close()).then(() => process.exit(0)));
