import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compose } from "../../src/knowledge/extract.js";
import { createChatService, type ChatService } from "../../src/service.js";
import { tempDir } from "../support/harness.js";

// The demo bot as a new user meets it: the bundled docs, the hash embedder, the extractive model.
let service: ChatService;
let cleanup: () => void;
let org: number;
beforeAll(async () => {
  const dir = tempDir();
  cleanup = dir.cleanup;
  service = await createChatService({ env: {}, db: join(dir.dir, "demo.db"), logLevel: "warn", renderWorker: false });
  await service.bootstrap({ ingestDocs: true });
  org = (await service.chatbots.get("demo")).organization_id;
});
afterAll(async () => {
  await service.close();
  cleanup();
});

async function ask(message: string) {
  const { conversation_id } = await service.conversations.start(org, "demo", {});
  const { data } = await service.chat.send(org, "demo", conversation_id, { message });
  if (data.reply === null) throw new Error("the bot did not answer");
  return data;
}

describe("extractive answers on the bundled docs", () => {
  it("answers how to embed the widget with both code blocks, whole and in order", async () => {
    const reply = await ask("How do I embed the widget on my site?");
    expect(reply.cannot_answer).toBe(false);
    const blocks = [...reply.reply.matchAll(/<pre><code[^>]*>([\s\S]*?)<\/code><\/pre>/g)].map((m) => m[1]!);
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toContain("&lt;script src=\"https://chat.example.com/widget.js\" data-chatbot=\"support\" async&gt;&lt;/script&gt;");
    expect(blocks[1]).toContain("npx chatsvc bots update support --allowed-origins https://www.example.com,https://shop.example.com");
  });

  it("keeps the install commands on their own lines in a code block, without the fence's language tag in the text", async () => {
    const reply = await ask("How do I install chatsvc?");
    expect(reply.reply).toMatch(/<pre><code[^>]*>[^<]*\nnpm install\nnpx chatsvc serve\n?<\/code><\/pre>/);
    expect(reply.reply.replace(/<pre>[\s\S]*?<\/pre>/g, "")).not.toMatch(/\bsh\b/);
  });

  it("answers a question the documents do not answer with the fallback message, no sources and cannot_answer", async () => {
    const reply = await ask("Can I pay with bitcoin?");
    expect(reply).toMatchObject({ cannot_answer: true, sources: [] });
    expect(reply.reply).toContain((await service.chatbots.get("demo")).fallback_message);
  });

  // The first is the question the demo page suggests. A docs example that quoted it in code was the whole answer's best match.
  it.each([
    ["How do I create an API key?", "chatsvc keys create"],
    ["How do I add documents to a chatbot?", "chatsvc ingest"],
  ])("answers %j with the command that does it, not a code example quoting the question", async (question, command) => {
    const reply = await ask(question);
    expect(reply.cannot_answer).toBe(false);
    expect(reply.reply).toContain(command);
    expect(reply.reply).not.toContain("<pre>");
  });

  it("says what happens when the credits run out, and the default rate limits", async () => {
    expect((await ask("What happens when credits run out?")).reply).toContain("Monthly credit limit reached");
    expect((await ask("What is the default rate limit?")).reply).toContain("300 requests a minute per key");
  });

  it("lists each command once when the answer quotes two overlapping chunks of the CLI page", async () => {
    const { reply } = await ask("How do I add my own documents?");
    const items = [...reply!.matchAll(/<li>([^]*?)<\/li>/g)].map((m) => m[1]);
    expect(items.length).toBeGreaterThan(1);
    expect(new Set(items).size).toBe(items.length);
  });

  it("answers from a configuration table cut by chunking with the row asked about, as a list", async () => {
    const { reply } = await ask("How do I set the Ollama host?");
    expect(reply).toMatch(/<li><code>ollamaHost<\/code> · <code>OLLAMA_HOST<\/code> · <code>http:\/\/127\.0\.0\.1:11434<\/code> · The Ollama server\.<\/li>/);
    expect(reply).not.toMatch(/\|\s*<code>/);
  });

  it("names a file source by its title beside its file name", async () => {
    const reply = await ask("What does status 429 mean?");
    expect(reply.reply).toContain("Using the REST API (api.md)");
    expect(reply.sources[0]).toMatchObject({ name: "api.md", type: "file", title: "Using the REST API" });
  });
});

describe("extractive passages", () => {
  const chunk = (content: string, extra: Partial<{ chunk_id: number; heading: string; name: string; type: string; url: string | null; title: string }> = {}) => ({
    chunk_id: 1,
    document_id: 1,
    content,
    heading: "Loans",
    name: "loans.md",
    title: "Loans",
    type: "file",
    url: null,
    score: 0.8,
    ...extra,
  });

  it("quotes a list item once when two overlapping chunks of one document both hold it", () => {
    const first = chunk("Commands for a chatbot's documents:\n- `ingest` adds documents to a chatbot.\n- `kb list` lists a chatbot's documents.\n- `kb remove` removes documents from a chatbot.");
    // The next chunk starts where the overlap begins: the last item again.
    const second = chunk("- `kb remove` removes documents from a chatbot.\n- `kb reindex` embeds a chatbot's documents again.", { chunk_id: 2 });
    const answer = compose("How do I add, list, remove and reindex a chatbot's documents?", [first, second])!;
    expect(answer.match(/kb remove/g)).toHaveLength(1);
    expect(answer).toContain("- `kb remove` removes documents from a chatbot.\n\n* `kb reindex` embeds a chatbot's documents again.");
    // A chunk whose list was quoted whole adds nothing.
    expect(compose("How do I remove a chatbot's documents?", [first, chunk("- `kb remove` removes documents from a chatbot.", { chunk_id: 2 })])).not.toMatch(/kb remove[^]*kb remove/);
  });

  it("quotes a table's rows that the question asks about, under the table's header", () => {
    const table = "Loan periods:\n\n| Item | Loan period | Renewals |\n|---|---|---|\n| Books | 21 days | 2 |\n| DVDs | 7 days | 1 |\n| Games | 14 days | 0 |";
    const answer = compose("How long is the loan period for DVDs?", [chunk(table)])!;
    expect(answer).toContain("| Item | Loan period | Renewals |\n|---|---|---|\n| DVDs | 7 days | 1 |");
    expect(answer).not.toMatch(/Books|Games/);
  });

  it("quotes rows of a table whose header is in an earlier chunk as a list, since they cannot render as a table", () => {
    // Chunking cut the table: this chunk starts with rows and has no header or delimiter row.
    const rows = "| Books | 21 days | 2 renewals |\n| DVDs | 7 days | 1 renewal |\n| Games | 14 days | no renewal |";
    const answer = compose("How long can I keep DVDs?", [chunk(rows)])!;
    expect(answer.split("\n\n")[0]).toBe("- DVDs · 7 days · 1 renewal");
    expect(answer).not.toContain("|");
  });

  it("keeps two quoted lists apart: the second takes other markers, so Markdown does not join them", () => {
    const first = chunk("- Opening hours on weekdays: 9 to 18.\n- Opening hours on Fridays: 9 to 16.", { chunk_id: 1 });
    const second = chunk("- Opening hours on Saturdays: 10 to 14.\n- Opening hours on Sundays: closed.", { chunk_id: 2 });
    const answer = compose("What are the opening hours?", [first, second])!;
    expect(answer).toContain("- Opening hours on weekdays: 9 to 18.\n- Opening hours on Fridays: 9 to 16.\n\n* Opening hours on Saturdays: 10 to 14.\n* Opening hours on Sundays: closed.");
  });

  it("keeps a list whole and in order after the sentence that introduces it", () => {
    const answer = compose("How long are loan periods?", [chunk("Loan periods depend on the item:\n- Books: 21 days.\n- DVDs: 7 days.\n- Games: 14 days.\n\nReturn items at any branch.")]);
    expect(answer).toContain("Loan periods depend on the item:\n\n- Books: 21 days.\n- DVDs: 7 days.\n- Games: 14 days.");
  });

  it("starts with the sentence that answers, not the start of its section, and quotes a few sentences at most", () => {
    const content = [
      "The library has three branches in the county.",
      "Each branch has a front desk and a returns box.",
      "Overdue DVDs cost 50p a day.",
      "Overdue books cost 20p a day.",
      "Charges stop at £5 per item.",
      "Children's cards never pay charges.",
      "Staff can waive a charge once a year.",
    ].join(" ");
    const answer = compose("What do overdue DVDs cost?", [chunk(content)])!;
    expect(answer.startsWith("Overdue DVDs cost 50p a day.")).toBe(true);
    const body = answer.slice(0, answer.indexOf("\n\n*Source:"));
    expect(body.match(/[.!?](\s|$)/g)!.length).toBeLessThanOrEqual(4);
  });

  it("links a web page source to its address", () => {
    const answer = compose("How long are loan periods?", [chunk("Loan periods are 21 days.", { name: "Loans | Library", type: "url", url: "https://library.example/loans" })]);
    expect(answer).toContain("[Loans | Library](https://library.example/loans)");
  });

  it("declines when no sentence covers the question's key words", () => {
    expect(compose("Can I pay with bitcoin?", [chunk("You can pay by card or cash at the front desk.")])).toBeNull();
  });
});
