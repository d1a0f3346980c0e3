import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEngine } from "../support/database.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fixtures/fake-openai.js";
import { runCli } from "../support/cli.js";
import { addTenant, startHarness, type Harness } from "../support/harness.js";
import { parseSseText } from "../support/sse.js";
import { BRANDING, ingestDocs, openConversation } from "./helpers.js";

let fake: FakeOpenAI;
let h: Harness;
let other: Awaited<ReturnType<typeof addTenant>>;
const MODEL_REPLY = "The model's own **answer**.";

/** Knowledge about every question asked here, so without a matching correction the model is called (not the fallback). */
const ACCOUNT_DOCS = [
  {
    name: "account.md",
    content:
      "Accounts and passwords\n\nTo reset your password or change your password, open Settings > Security. To reset your router, hold its button. " +
      "You can delete your account under Settings.\n\nDiscounts: students and military members may ask for a discount. " +
      "To end or terminate your subscription, write to billing. The shop is open on Sundays in December. Invoices are sent by email and can be paid by invoice or card. " +
      "Widgetron needs Node 20.",
  },
];

beforeAll(async () => {
  fake = await startFakeOpenAI({ reply: MODEL_REPLY });
  h = await startHarness({ chatModel: "openai:fake", openaiBaseUrl: fake.baseUrl });
  await ingestDocs(h.service);
  await ingestDocs(h.service, "demo", ACCOUNT_DOCS);
  await h.service.chatbots.create({ organization_id: h.tenant.organization.id, slug: "sales", name: "Sales" });
  await ingestDocs(h.service, "sales", ACCOUNT_DOCS);
  other = await addTenant(h.service);
});
afterAll(async () => {
  await h.close();
  await fake.close();
});

const create = (body: unknown, slug = "demo", key?: string) => h.call(`/chatbots/${slug}/corrections`, { json: body, ...(key && { key }) });

/** Sends a visitor message in a new conversation of `slug`; answers the reply and how many model calls it made. */
async function ask(message: string, slug = "demo") {
  const conversation = await openConversation(h, {}, slug);
  const before = fake.calls;
  const res = await h.call(`/chatbots/${slug}/conversations/${conversation}/messages`, { json: { message } });
  expect(res.status, res.text).toBe(200);
  return { conversation, res, data: res.body.data, meta: res.body.meta, modelCalls: fake.calls - before };
}

describe("CRUD", () => {
  it("creates, lists (paginated, newest first), updates partially and deletes a chatbot's corrections", async () => {
    const made = await create({ question: "Do you ship to Canada?", answer: "Yes, in **5** days.", source_name: "Shipping FAQ", source_url: "https://example.com/shipping" });
    expect(made.status).toBe(201);
    expect(made.body.data).toEqual({
      id: expect.any(Number),
      question: "Do you ship to Canada?",
      answer: "Yes, in **5** days.",
      source_name: "Shipping FAQ",
      source_url: "https://example.com/shipping",
      created_at: expect.any(String),
      updated_at: made.body.data.created_at,
    });
    const second = await create({ question: "Do you have gift cards?", answer: "Not yet." });
    expect(second.body.data).toMatchObject({ source_name: null, source_url: null });

    const page = await h.call("/chatbots/demo/corrections?per_page=1");
    expect(page.status).toBe(200);
    expect(page.body.data.map((c: { id: number }) => c.id)).toEqual([second.body.data.id]);
    expect(page.body.meta).toMatchObject({ current_page: 1, per_page: 1, last_page: page.body.meta.total });
    expect(page.body.links.next).toBe("/api/v1/chatbots/demo/corrections?per_page=1&page=2");

    const id = made.body.data.id;
    const updated = await h.call(`/chatbots/demo/corrections/${id}`, { method: "PUT", json: { answer: "Yes, in 3 days.", source_name: null } });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ question: "Do you ship to Canada?", answer: "Yes, in 3 days.", source_name: null, source_url: "https://example.com/shipping" });

    const removed = await h.call(`/chatbots/demo/corrections/${id}`, { method: "DELETE" });
    expect(removed.status).toBe(200);
    expect(removed.body.data).toEqual({ id });
    expect((await h.call(`/chatbots/demo/corrections/${id}`, { method: "DELETE" })).status).toBe(404);
    expect((await h.call(`/chatbots/demo/corrections/${id}`, { method: "PUT", json: { answer: "x" } })).status).toBe(404);
    const listed = await h.call("/chatbots/demo/corrections?per_page=100");
    expect(listed.body.data.map((c: { id: number }) => c.id)).not.toContain(id);
    await h.call(`/chatbots/demo/corrections/${second.body.data.id}`, { method: "DELETE" });
  });

  it("the library and the typed shapes agree with the API", async () => {
    const org = h.tenant.organization.id;
    const made = await h.service.corrections.create(org, "demo", { question: "Is there a mobile app?", answer: "Yes, for iOS and Android." });
    const listed = await h.service.corrections.list(org, "demo", { per_page: 100 });
    expect(listed.data).toContainEqual(made);
    await h.service.corrections.delete(org, "demo", made.id);
    await expect(h.service.corrections.get(org, "demo", made.id)).rejects.toMatchObject({ status: 404 });
  });
});

describe("refusals", () => {
  it("403 for a chatbot of another organisation, 404 for a correction of another chatbot or none", async () => {
    const ours = (await create({ question: "Where is your office?", answer: "In Lisbon." })).body.data.id as number;
    const theirs = (await create({ question: "Where is your office?", answer: "In Oslo." }, other.chatbot.slug, other.key.key)).body.data.id as number;
    const sales = (await create({ question: "Where is your warehouse?", answer: "In Porto." }, "sales")).body.data.id as number;

    for (const [path, init] of [
      ["/chatbots/demo/corrections", {}],
      ["/chatbots/demo/corrections", { json: { question: "Q words", answer: "A" } }],
      [`/chatbots/demo/corrections/${ours}`, { method: "PUT", json: { answer: "Stolen" } }],
      [`/chatbots/demo/corrections/${ours}`, { method: "DELETE" }],
    ] as const) {
      const res = await h.call(path, { ...init, key: other.key.key });
      expect(res.status, `${path} ${JSON.stringify(init)}`).toBe(403);
    }
    // Our key on their slug, and on a slug that does not exist: the same 403.
    for (const slug of [other.chatbot.slug, "no-such-bot"]) {
      expect((await h.call(`/chatbots/${slug}/corrections`)).status).toBe(403);
      expect((await h.call(`/chatbots/${slug}/corrections/${theirs}`, { method: "DELETE" })).status).toBe(403);
    }
    // A correction id of another chatbot (ours or theirs) addressed through demo, or none at all.
    for (const id of [sales, theirs, 999_999, "abc"]) {
      expect((await h.call(`/chatbots/demo/corrections/${id}`, { method: "PUT", json: { answer: "x" } })).status, String(id)).toBe(404);
      expect((await h.call(`/chatbots/demo/corrections/${id}`, { method: "DELETE" })).status, String(id)).toBe(404);
    }
    expect((await h.service.corrections.get(other.organization.id, other.chatbot.slug, theirs)).answer).toBe("In Oslo.");
    expect((await h.service.corrections.get(h.tenant.organization.id, "demo", ours)).answer).toBe("In Lisbon.");
  });

  it("422 names each bad field, and nothing is stored", async () => {
    const before = (await h.call("/chatbots/demo/corrections")).body.meta.total;
    const cases: [unknown, string[]][] = [
      [{}, ["question", "answer"]],
      [{ question: "  ", answer: "" }, ["question", "answer"]],
      [{ question: 42, answer: ["a"] }, ["question", "answer"]],
      [{ question: "What is it?", answer: "Something." }, ["question"]],
      [{ question: "How do I pay?", answer: "<script>alert(1)</script>" }, ["answer"]],
      [{ question: "How do I pay?", answer: "By card.", source_url: "javascript:alert(1)" }, ["source_url"]],
      [{ question: "How do I pay?", answer: "By card.", source_name: "x".repeat(256) }, ["source_name"]],
      [{ question: "x".repeat(10_001), answer: "By card." }, ["question"]],
      [[], ["body"]],
    ];
    for (const [body, fields] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(Object.keys(res.body.errors).sort(), JSON.stringify(body).slice(0, 80)).toEqual(fields.sort());
    }
    const id = (await create({ question: "How do I pay?", answer: "By card." })).body.data.id;
    const empty = await h.call(`/chatbots/demo/corrections/${id}`, { method: "PUT", json: {} });
    expect(empty.status).toBe(422);
    expect(empty.body.errors).toEqual({ body: ["Nothing to update: give at least one of question, answer, source_name or source_url."] });
    expect((await h.call(`/chatbots/demo/corrections/${id}`, { method: "PUT", json: { question: "the?" } })).status).toBe(422);
    expect((await h.call("/chatbots/demo/corrections?per_page=0")).status).toBe(422);
    expect((await h.call("/chatbots/demo/corrections")).body.meta.total).toBe(before + 1);
    await h.call(`/chatbots/demo/corrections/${id}`, { method: "DELETE" });
  });
});

describe("answering with a correction", () => {
  let reset: number;
  let discount: number;
  beforeAll(async () => {
    reset = (await create({ question: "How do I reset my password?", answer: "Use **Forgot password** on the sign-in page.", source_url: "https://example.com/reset" })).body.data.id;
    discount = (await create({ question: "Do you offer a student discount?", answer: "Yes: 20 % with a student card.", source_name: "Pricing FAQ" })).body.data.id;
    await create({ question: "How do I end my subscription?", answer: "Under Settings > Billing, choose **End subscription**." });
    await create({ question: "How much does the Pro plan cost?", answer: "Sales: ask us for a quote." }, "sales");
  });

  it("an exact question gets the correction's answer, rendered and branded, its source, no model call, charged like a message", async () => {
    const { data, meta, modelCalls } = await ask("How do I reset my password?");
    expect(modelCalls).toBe(0);
    expect(data.reply).toContain("Use <strong>Forgot password</strong> on the sign-in page.");
    expect(data.reply).toMatch(BRANDING);
    expect(data).toMatchObject({ cannot_answer: false, model: "correction" });
    expect(data.sources).toEqual([{ type: "correction", id: reset, name: "How do I reset my password?", url: "https://example.com/reset", score: 1 }]);
    expect(meta.this_message).toBe(1);

    const named = await ask("Do you offer a student discount?");
    expect(named.data.sources).toEqual([{ type: "correction", id: discount, name: "Pricing FAQ", score: 1 }]);
    expect(named.meta.credits_used).toBe(meta.credits_used + 1);

    // History shows the stored reply with the same source.
    const history = await h.call(`/chatbots/demo/conversations/${named.conversation}`);
    expect(history.body.data.messages[1].sources).toEqual(named.data.sources);
  });

  it("rephrased questions match: word order, inflections, stop words, a related word", async () => {
    for (const [question, id] of [
      ["how can i reset my password", reset],
      ["Password reset: how?", reset],
      ["Do you offer a discount for students?", discount],
      ["How do I terminate my subscription?", undefined],
    ] as const) {
      const { data, modelCalls } = await ask(question);
      expect(modelCalls, question).toBe(0);
      expect(data.model, question).toBe("correction");
      if (id !== undefined) expect(data.sources[0].id, question).toBe(id);
      expect(data.sources[0].score, question).toBeGreaterThanOrEqual(0.7);
    }
  });

  it("near-miss questions do not match: the model answers them", async () => {
    for (const question of [
      "How do I reset my router?",
      "How do I change my password?",
      "password?",
      "How do I reset my password and delete my account?",
      "Do you offer a military discount?",
      "How much does the Pro plan cost?",
    ]) {
      const { data, modelCalls } = await ask(question);
      expect(modelCalls, question).toBe(1);
      expect(data.model, question).toBe("openai:fake");
      expect(data.sources.some((s: { type: string }) => s.type === "correction"), question).toBe(false);
    }
  });

  it("a correction answers only its own chatbot", async () => {
    const sales = await ask("How much does the Pro plan cost?", "sales");
    expect(sales.modelCalls).toBe(0);
    expect(sales.data.reply).toContain("Sales: ask us for a quote.");
    const demo = await ask("How do I reset my password?", "sales");
    expect(demo.modelCalls).toBe(1);
  });

  it("a streamed send gets the answer as a delta and the reply in `done`, with no model call", async () => {
    const conversation = await openConversation(h);
    const before = fake.calls;
    const res = await fetch(`${h.api}/chatbots/demo/conversations/${conversation}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.tenant.key.key}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ message: "How do I reset my password?" }),
    });
    const frames = parseSseText(await res.text());
    expect(fake.calls).toBe(before);
    expect(frames.filter((f) => f.event === "delta").map((f) => f.data.text).join("")).toBe("Use **Forgot password** on the sign-in page.");
    const done = frames.find((f) => f.event === "done")!.data;
    expect(done.data).toMatchObject({ model: "correction", sources: [{ type: "correction", id: reset }] });
    expect(done.meta.this_message).toBe(1);
  });

  it("an edited or deleted correction applies to the next message", async () => {
    const id = (await create({ question: "Are you open on Sundays?", answer: "No." })).body.data.id;
    expect((await ask("Are you open on Sundays?")).data.reply).toContain("No.");
    await h.call(`/chatbots/demo/corrections/${id}`, { method: "PUT", json: { answer: "Yes, from 10 to 14." } });
    expect((await ask("Are you open on Sundays?")).data.reply).toContain("Yes, from 10 to 14.");
    await h.call(`/chatbots/demo/corrections/${id}`, { method: "DELETE" });
    expect((await ask("Are you open on Sundays?")).modelCalls).toBe(1);
  });
});

describe("correcting a reply", () => {
  it("turns an assistant reply into a correction for the question before it; the next such question gets it", async () => {
    const { conversation, data, modelCalls } = await ask("Which Node version does Widgetron need?");
    expect(modelCalls).toBe(1);
    const res = await h.call(`/conversations/${conversation}/messages/${data.message_id}/correct`, { json: { answer: "Node **22** or newer.", source_name: "Install guide" } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ question: "Which Node version does Widgetron need?", answer: "Node **22** or newer.", source_name: "Install guide", source_url: null });
    const listed = await h.call("/chatbots/demo/corrections?per_page=100");
    expect(listed.body.data.map((c: { id: number }) => c.id)).toContain(res.body.data.id);

    const again = await ask("Which Node version does Widgetron need?");
    expect(again.modelCalls).toBe(0);
    expect(again.data.reply).toContain("Node <strong>22</strong> or newer.");
    expect(again.data.sources).toEqual([{ type: "correction", id: res.body.data.id, name: "Install guide", score: 1 }]);
  });

  it("403 for another organisation's conversation, 404 for none or a message not in it, 400 for no reply or no question, 422 for a bad body", async () => {
    const { conversation, data } = await ask("Where are invoices sent?");
    const userMessage = data.message_id - 1;
    const path = (c: number | string, m: number | string) => `/conversations/${c}/messages/${m}/correct`;
    const before = (await h.call("/chatbots/demo/corrections")).body.meta.total;

    expect((await h.call(path(conversation, data.message_id), { json: { answer: "x" }, key: other.key.key })).status).toBe(403);
    expect((await h.call(path(999_999, data.message_id), { json: { answer: "x" } })).status).toBe(404);
    const elsewhere = await ask("Where are invoices sent?");
    expect((await h.call(path(conversation, elsewhere.data.message_id), { json: { answer: "x" } })).status).toBe(404);
    expect((await h.call(path(conversation, 999_999), { json: { answer: "x" } })).status).toBe(404);
    const notReply = await h.call(path(conversation, userMessage), { json: { answer: "x" } });
    expect(notReply.status).toBe(400);
    expect(notReply.body.message).toBe("Only an assistant reply can be corrected");

    // An operator's message opening a conversation answers no question.
    const quiet = await openConversation(h);
    const operator = await h.call(`/conversations/${quiet}/messages`, { json: { message: "Hello, how can we help?" } });
    const noQuestion = await h.call(path(quiet, operator.body.data.id), { json: { answer: "x" } });
    expect(noQuestion.status).toBe(400);

    for (const body of [{}, { answer: "" }, { answer: 7 }, { answer: "ok", source_url: "ftp://example.com" }]) {
      const bad = await h.call(path(conversation, data.message_id), { json: body });
      expect(bad.status, JSON.stringify(body)).toBe(422);
    }
    expect((await h.call("/chatbots/demo/corrections")).body.meta.total).toBe(before);
  });
});

describe("chatsvc corrections", { timeout: 90_000 }, () => {
  // Each run is a process opening the database: few runs, the API covers the rules.
  // The CLI prints what the service calls tested above on both engines return: it runs here on SQLite, and against
  // PostgreSQL (`--database-url`) in test/scale, so each command does not start a process per engine.
  it.skipIf(testEngine === "postgres")("add (--json), list (a table) and remove", async () => {
    const db = h.database.cliArgs;
    const added = await runCli([...db, "corrections", "add", "demo", "--question", "Can I pay by invoice?", "--answer", "Yes, on the **Pro** plan.", "--json"]);
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    const created = added.json();
    expect(created).toMatchObject({ question: "Can I pay by invoice?", answer: "Yes, on the **Pro** plan.", source_name: null });
    expect((await ask("Can I pay by invoice?")).modelCalls).toBe(0);

    const table = await runCli([...db, "corrections", "list", "demo"]);
    expect(table.stdout).toMatch(/^id\s+question\s+answer\s+source_name\s+updated_at$/m);
    expect(table.stdout).toMatch(new RegExp(`^${created.id}\\s+Can I pay by invoice\\?\\s+Yes, on the \\*\\*Pro\\*\\* plan\\.`, "m"));

    const removed = await runCli([...db, "corrections", "remove", "demo", String(created.id)]);
    expect(removed.stdout).toBe(`Removed correction ${created.id} from "demo".\n`);
    expect((await h.call(`/chatbots/demo/corrections/${created.id}`, { method: "DELETE" })).status).toBe(404);
  });
});
