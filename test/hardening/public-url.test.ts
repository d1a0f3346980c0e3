import { spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ChatServiceOptions } from "../../src/core/config.js";
import { pageLinks, pageMeta } from "../../src/core/pagination.js";
import { createChatService } from "../../src/service.js";
import { TEST_CLI_DIR } from "../support/build-cli.js";
import { runCli } from "../support/cli.js";
import { request, startHarness, tempDir, type Harness } from "../support/harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** GET over a real socket with any `Host` and raw path, which fetch would not send as given. */
function rawGet(url: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    httpRequest({ hostname, port, path, headers }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    })
      .on("error", reject)
      .end();
  });
}

async function withLeads(options: ChatServiceOptions = {}): Promise<Harness> {
  const harness = await startHarness(options);
  for (let i = 0; i < 3; i++) {
    const opened = await harness.call("/chatbots/demo/conversations", { json: {} });
    await harness.call(`/chatbots/demo/conversations/${opened.body.data.conversation_id}/leads`, { json: { name: `Lead ${i}` } });
  }
  return harness;
}

const hostile = (key: string) => ({ host: "evil.example", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https", authorization: `Bearer ${key}` });

describe("pagination links", () => {
  it("are relative (path and query) without publicUrl, whatever Host the request names", async () => {
    h = await withLeads();
    for (const list of ["/api/v1/leads", "/api/v1/conversations"]) {
      const res = await rawGet(h.server.url, `${list}?per_page=1&page=2`, hostile(h.tenant.key.key));
      expect(res.status, list).toBe(200);
      expect(JSON.stringify(res.body.links), list).not.toContain("evil.example");
      expect(res.body.links, list).toEqual({
        first: `${list}?per_page=1&page=1`,
        last: `${list}?per_page=1&page=3`,
        prev: `${list}?per_page=1&page=1`,
        next: `${list}?per_page=1&page=3`,
      });
    }
  });

  it("never start with // (a protocol-relative URL names another host)", () => {
    const meta = pageMeta({ page: 1, perPage: 1, total: 2, count: 1 });
    expect(pageLinks(new URL("http://127.0.0.1//evil.example/api/v1/leads"), meta).next).toBe("/evil.example/api/v1/leads?page=2&per_page=1");
  });

  it("are absolute on publicUrl when it is set, path prefix included", async () => {
    h = await withLeads({ publicUrl: "https://chat.example.com/support/" });
    const res = await rawGet(h.server.url, "/api/v1/leads?per_page=1&chatbot=demo", hostile(h.tenant.key.key));
    expect(res.body.links).toEqual({
      first: "https://chat.example.com/support/api/v1/leads?per_page=1&chatbot=demo&page=1",
      last: "https://chat.example.com/support/api/v1/leads?per_page=1&chatbot=demo&page=3",
      prev: null,
      next: "https://chat.example.com/support/api/v1/leads?per_page=1&chatbot=demo&page=2",
    });
  });
});

describe("publicUrl", () => {
  it("comes from CHATSVC_PUBLIC_URL, normalised to origin plus path without a trailing slash", async () => {
    const service = await createChatService({ db: ":memory:", env: { CHATSVC_PUBLIC_URL: "HTTPS://Chat.Example.com:443/" }, renderWorker: false });
    expect(service.config.publicUrl).toBe("https://chat.example.com");
    void service.close();
  });

  it("refuses anything but an http(s) origin with an optional path (422 naming publicUrl)", async () => {
    for (const bad of ["chat.example.com", "ftp://chat.example.com", "https://user:pw@chat.example.com", "https://chat.example.com/?a=1", "https://chat.example.com/#x", "/api", "https://"]) {
      await expect(createChatService({ db: ":memory:", env: {}, publicUrl: bad }), bad).rejects.toThrow(
        expect.objectContaining({ status: 422, errors: { publicUrl: [expect.stringContaining("publicUrl")] } }),
      );
    }
  });
});

describe("serve --public-url", () => {
  it("makes the links of the served API absolute on it", async () => {
    const { dir, cleanup } = tempDir();
    const child = spawn(process.execPath, [join(TEST_CLI_DIR, "cli.js"), "serve", "--port", "0", "--public-url", "https://chat.example.com"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    try {
      const until = Date.now() + 15_000;
      while (!/listening on (\S+)/.test(out)) {
        if (Date.now() > until) throw new Error(`serve did not start: ${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const url = /listening on (\S+)/.exec(out)![1];
      const res = await request(`${url}/api/v1/leads`, { key: /sk_live_\w{32}/.exec(out)![0] });
      expect(res.body.links.first).toBe("https://chat.example.com/api/v1/leads?page=1&per_page=20");
      expect(out).toContain("Chat with the demo bot: open https://chat.example.com/ in a browser");
    } finally {
      child.kill("SIGTERM");
      await exited;
      cleanup();
    }
  });

  it("refuses a bad value before starting, naming publicUrl", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const res = await runCli(["serve", "--port", "0", "--public-url", "chat.example.com"], { cwd: dir });
      expect(res.code).not.toBe(0);
      expect(res.stderr).toMatch(/publicUrl must be an http\(s\) URL/);
    } finally {
      cleanup();
    }
  });
});
