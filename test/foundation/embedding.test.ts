import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { H3 } from "h3";
import { toNodeHandler } from "h3/node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApiApp } from "../../src/h3.js";
import { createChatService, type ChatService } from "../../src/index.js";
import { request, tempDir } from "../support/harness.js";

let service: ChatService;
let key: string;
let cleanup: () => void;
let server: Server | undefined;

beforeEach(async () => {
  const tmp = tempDir();
  cleanup = tmp.cleanup;
  service = await createChatService({ db: `${tmp.dir}/embed.db`, env: {} });
  key = (await service.bootstrap()).key.key;
});
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  await service.close();
  cleanup();
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("embedding the API", () => {
  it("mounts under /api/v1 inside the user's own h3 app, next to their routes", async () => {
    const app = new H3();
    app.get("/", () => ({ home: true }));
    app.mount("/api/v1", createApiApp(service));
    const base = await listen(toNodeHandler(app));

    expect((await request(`${base}/`)).body).toEqual({ home: true });
    const auth = await request(`${base}/api/v1/auth/test`, { key });
    expect(auth.status).toBe(200);
    expect(auth.body.data.email).toBe("owner@example.com");
    const bots = await request(`${base}/api/v1/chatbots`, { key });
    expect(bots.body.meta.total).toBe(1);
    const missing = await request(`${base}/api/v1/nope`, { key });
    expect(missing.status).toBe(404);
    expect(missing.body.success).toBe(false);
    expect((await request(`${base}/api/v1/auth/test`)).body).toEqual({ success: false, message: "API key is required" });
  });

  it("serves from a plain node:http server, prefix stripped by the host app", async () => {
    const handler = toNodeHandler(createApiApp(service));
    const base = await listen((req, res) => {
      if (!req.url?.startsWith("/api/v1/")) {
        res.writeHead(200, { "content-type": "text/plain" }).end("host app");
        return;
      }
      req.url = req.url.slice("/api/v1".length);
      void handler(req, res);
    });
    expect((await request(`${base}/other`)).text).toBe("host app");
    const auth = await request(`${base}/api/v1/auth/test`, { headers: { "x-api-key": key } });
    expect(auth.status).toBe(200);
    expect(auth.body.message).toBe("Authentication successful");
    const wrongMethod = await request(`${base}/api/v1/auth/test`, { key, method: "DELETE" });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("GET");
    expect(wrongMethod.body.success).toBe(false);
  });
});
