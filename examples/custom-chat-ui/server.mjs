// A custom chat page: this backend keeps the API key and proxies the spec's chat flow;
// the browser never sees the key. Start chatsvc first (npx chatsvc serve), then:
// Run: CHATSVC_API_KEY=sk_live_... node examples/custom-chat-ui/server.mjs
//      (CHATSVC_URL default http://127.0.0.1:3000/api/v1, CHATSVC_BOT default demo, PORT default 8080)
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { ChatsvcError, createClient } from "chatsvc/client";

const chatsvc = createClient({
  baseUrl: process.env.CHATSVC_URL ?? "http://127.0.0.1:3000/api/v1",
  apiKey: process.env.CHATSVC_API_KEY ?? "",
});
const BOT = process.env.CHATSVC_BOT ?? "demo";
// The browser holds an opaque token, not a conversation id it could swap for someone else's.
const conversations = new Map();

const page = (name, type) => async () => ({ status: 200, type, body: await readFile(new URL(`./public/${name}`, import.meta.url)) });
const json = (status, value) => ({ status, type: "application/json", body: JSON.stringify(value) });

const routes = {
  "GET /": page("index.html", "text/html; charset=utf-8"),
  "GET /chat.js": page("chat.js", "text/javascript; charset=utf-8"),
  "GET /chat/config": async () => {
    const { data } = await chatsvc.chatbots.get(BOT);
    return json(200, { name: data.display_name, greeting: data.greeting_message, placeholder: data.placeholder_text, color: data.appearance.primary_color });
  },
  "POST /chat/start": async () => {
    const { data } = await chatsvc.chatbots.startConversation(BOT);
    const token = randomUUID();
    conversations.set(token, data.conversation_id);
    return json(201, { token });
  },
  "POST /chat/send": async ({ token, message }) => {
    const id = conversations.get(token);
    if (id === undefined) return json(404, { error: "Unknown conversation" });
    const { data } = await chatsvc.chatbots.send(BOT, id, String(message ?? ""));
    return json(200, { reply: data.reply, sources: data.sources });
  },
  "POST /chat/end": async ({ token }) => {
    const id = conversations.get(token);
    if (id !== undefined) await chatsvc.chatbots.end(BOT, id);
    conversations.delete(token);
    return json(200, { ended: true });
  },
};

const server = createServer(async (req, res) => {
  const route = routes[`${req.method} ${req.url}`];
  if (!route) return res.writeHead(404).end();
  let answer;
  try {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    answer = await route(raw ? JSON.parse(raw) : {});
  } catch (error) {
    // Pass on what the visitor can act on (e.g. a 422 on an empty message); hide the rest.
    const visible = error instanceof ChatsvcError && error.status < 500 && error.status !== 401 && error.status !== 403;
    if (!visible) console.error(error);
    answer = json(visible ? error.status : 502, { error: visible ? error.message : "The chat service is unavailable" });
  }
  res.writeHead(answer.status, { "content-type": answer.type }).end(answer.body);
});
server.listen(Number(process.env.PORT ?? 8080), "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.once("SIGTERM", () => server.close(() => process.exit(0)));
process.once("SIGINT", () => server.close(() => process.exit(0)));
