import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../../src/core/package-root.js";
import { createChatService } from "../../src/service.js";
import { startHarness, tempDir, type Harness } from "../support/harness.js";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

// Questions a new user asks the demo bot, answered by chatsvc's bundled docs.
// Written separately from the help-centre set that the scoring was tuned on.
const QUESTIONS: [string, string][] = [
  ["How do I start the server?", "quick-start.md"],
  ["Which Node.js version do I need?", "quick-start.md"],
  ["How can I add my PDF files to a chatbot?", "knowledge-base.md"],
  ["What happens after I change the embedding model?", "knowledge-base.md"],
  ["How are webhook deliveries signed?", "webhooks.md"],
  ["How many times is a failed webhook retried?", "webhooks.md"],
  ["Can I hide the Powered by branding in replies?", "keys-and-attribution.md"],
  ["How do I disable an API key?", "keys-and-attribution.md"],
  ["Which environment variable sets the database file?", "configuration.md"],
  ["How do I use Ollama as the chat model?", "configuration.md"],
  ["How do I stream the reply with server-sent events?", "api.md"],
  ["What does status 429 mean?", "api.md"],
  ["Which command lists the documents of a chatbot?", "cli.md"],
  ["How do I run several instances behind a load balancer?", "several-instances.md"],
  ["How do I verify a webhook signature?", "webhooks.md"],
  ["How do I keep ingested web pages up to date?", "knowledge-base.md"],
  ["How do I sign in to the operator console?", "operator-console.md"],
  ["Can a visitor talk to a real person?", "operator-console.md"],
  ["How do I give the bot a fixed answer to a question?", "operator-console.md"],
];

describe("the demo chatbot", () => {
  it("knows chatsvc's own documentation after first-run setup", async () => {
    expect(h.tenant.knowledge).toEqual({ documents: 10, chunks: expect.any(Number) });
    expect((await h.call("/chatbots/demo")).body.data.has_knowledge_base).toBe(true);
    expect(await (await h.service.knowledge.list("demo")).map((d) => d.name).sort()).toEqual([
      "api.md",
      "cli.md",
      "configuration.md",
      "keys-and-attribution.md",
      "knowledge-base.md",
      "operator-console.md",
      "quick-start.md",
      "several-instances.md",
      "webhooks.md",
      "widget.md",
    ]);
  });

  it("finds the right page in its top 3 for questions about chatsvc, and nothing for unrelated ones", async () => {
    const misses: string[] = [];
    for (const [question, page] of QUESTIONS) {
      const hits = await h.service.knowledge.search("demo", question, { k: 3 });
      if (!hits.some((hit) => hit.name === page)) misses.push(`${question} -> ${hits.map((hit) => `${hit.name} ${hit.score}`).join(", ") || "(nothing)"}`);
    }
    expect(misses.length / QUESTIONS.length, misses.join("\n")).toBeLessThanOrEqual(0.1);
    for (const question of ["What is the weather like in Paris tomorrow?", "Who painted the Mona Lisa?", "Suggest a vegetarian lasagne recipe"]) {
      expect(await h.service.knowledge.search("demo", question), question).toEqual([]);
    }
  });

  // The bot answers developers from these pages: a field named there that the API does not send is a wrong answer.
  it("names the send reply's fields and meta as the API sends them", async () => {
    const page = readFileSync(join(packageRoot(), "docs", "api.md"), "utf8");
    const step = page.split("\n").find((line) => line.includes("sends the visitor's message"))!;
    const named = new Set([...step.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
    const opened = await h.call("/chatbots/demo/conversations", { method: "POST", json: {} });
    const sent = await h.call(`/chatbots/demo/conversations/${opened.body.data.conversation_id}/messages`, { method: "POST", json: { message: "How do I change the port?" } });
    expect(sent.status).toBe(200);
    expect(Object.keys(sent.body.data).filter((field) => !named.has(field))).toEqual([]);
    const credits = page.split("\n").find((line) => line.includes("send reply's `meta`"))!;
    expect(Object.keys(sent.body.meta).filter((field) => !credits.includes(`\`${field}\``))).toEqual([]);
  });

  it("can be set up without the docs", async () => {
    const { dir, cleanup } = tempDir();
    const service = await createChatService({ env: {}, db: join(dir, "bare.db") });
    try {
      const bare = await service.bootstrap({ ingestDocs: false });
      expect(bare.knowledge).toBeNull();
      expect(await service.knowledge.hasKnowledge(bare.chatbot.id)).toBe(false);
    } finally {
      await service.close();
      cleanup();
    }
  });
});
