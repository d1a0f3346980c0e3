import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { buildPrompt } from "../../src/models/prompt.js";
import type { PromptMessage } from "../../src/models/types.js";
import { toPlainText } from "../../src/core/branding.js";
import { ingestDocs, openConversation } from "./helpers.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fixtures/fake-openai.js";
import { startHarness, type Harness } from "../support/harness.js";
import { internalsOf } from "../../src/service.js";

// The history a model sees is read from the conversation's end (recentHistory); these check it is
// still exactly what the prompt builder keeps of the whole conversation.
describe("conversation history in the model's prompt", () => {
  let fake: FakeOpenAI;
  let h: Harness;
  let conversationId: number;

  beforeEach(async () => {
    fake = await startFakeOpenAI();
    h = await startHarness({ env: { CHATSVC_CHAT_MODEL: "openai:gpt-4o-mini", OPENAI_BASE_URL: `${fake.url}/v1` } });
    await ingestDocs(h.service);
    conversationId = await openConversation(h);
  });
  afterEach(async () => {
    await h?.close();
    await fake.close();
  });

  /** Adds turns without a model call, as an operator relaying them would. */
  async function addTurns(count: number, length: (n: number) => number) {
    const org = h.tenant.organization.id;
    for (let n = 0; n < count; n++) {
      await h.service.chat.post(org, conversationId, { role: "user", message: `Question ${n} ${"q".repeat(length(n))}` });
      await h.service.chat.post(org, conversationId, { role: "assistant", message: `Answer **${n}** ${"a".repeat(length(n))}` });
    }
  }

  /** What the prompt keeps when given the whole conversation so far (the way it was built before reading from the end). */
  async function expectedTurns(): Promise<PromptMessage[]> {
    const { messages } = await h.service.conversations.history(h.tenant.organization.id, "demo", conversationId);
    const history = messages.map((m): PromptMessage => (m.role === "user" ? { role: "user", content: m.content } : { role: "assistant", content: toPlainText(m.content) }));
    const prompt = buildPrompt({ botName: "", instructions: "", language: "en", context: [], history, question: "" });
    return prompt.slice(1, -1);
  }

  async function sentTurns(question: string): Promise<PromptMessage[]> {
    fake.behave({ reply: "The Pro plan costs 49 euros per month." });
    const expected = await expectedTurns();
    const res = await h.call(`/chatbots/demo/conversations/${conversationId}/messages`, { json: { message: question } });
    expect(res.status).toBe(200);
    const messages = fake.requests.filter((r) => r.path === "/v1/chat/completions").at(-1)!.body.messages as PromptMessage[];
    expect(messages.slice(1, -1)).toEqual(expected);
    return messages.slice(1, -1);
  }

  it("keeps every earlier turn of a conversation longer than one read but within the budget", async () => {
    await addTurns(20, () => 10);
    const turns = await sentTurns("What does the Pro plan cost?");
    expect(turns).toHaveLength(40);
    expect(turns[0]!.content).toContain("Question 0 ");
  });

  it("keeps only the newest turns within the budget of a long conversation", async () => {
    await addTurns(60, (n) => 40 + (n % 7) * 60);
    const turns = await sentTurns("What does the Pro plan cost?");
    expect(turns.length).toBeGreaterThan(4);
    expect(turns.length).toBeLessThan(120);
    expect(turns.at(-1)!.content).toContain("Answer 59 ");
  });

  it("reads the history for a model that is given it, and not for the extractive model, which answers from the knowledge base alone", async () => {
    await addTurns(3, () => 10);
    const reads = vi.spyOn(internalsOf(h.service).storage.conversations, "latestMessages");
    try {
      await sentTurns("What does the Pro plan cost?");
      expect(reads).toHaveBeenCalled();
      reads.mockClear();
      await h.service.chatbots.update("demo", { model: "extractive" });
      const res = await h.call(`/chatbots/demo/conversations/${conversationId}/messages`, { json: { message: "What does the Pro plan cost?" } });
      expect(res.status).toBe(200);
      expect(res.body.data.cannot_answer).toBe(false);
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
  });

  it("leaves a regenerated reply out and a replaced one in", async () => {
    await addTurns(30, () => 20);
    fake.behave({ reply: "The first answer." });
    await h.call(`/chatbots/demo/conversations/${conversationId}/messages`, { json: { message: "What does the Pro plan cost?" } });
    const { messages } = await h.service.conversations.history(h.tenant.organization.id, "demo", conversationId);
    fake.behave({ reply: "The second answer." });
    expect((await h.call(`/chatbots/demo/conversations/${conversationId}/messages/${messages.at(-1)!.id}/regenerate`, { method: "POST" })).status).toBe(200);
    const turns = await sentTurns("And invoices?");
    expect(turns.at(-1)!.content).toContain("The second answer.");
    expect(turns.map((t) => t.content).join("\n")).not.toContain("The first answer.");
  });
});
