import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChatService, type ChatService } from "../../src/service.js";
import { testDatabase, type TestDatabase } from "../support/database.js";
import { tempDir } from "../support/harness.js";

// A help centre of 12 documents written for this test, with paraphrased
// questions (few share the documents' exact wording) and off-topic ones.
const fixtures = join(import.meta.dirname, "fixtures");
const questions = JSON.parse(readFileSync(join(fixtures, "help-center-questions.json"), "utf8")) as { answerable: [string, string][]; offTopic: string[] };

let service: ChatService;
let cleanup: () => void;
let database: TestDatabase;
beforeAll(async () => {
  const dir = tempDir();
  cleanup = dir.cleanup;
  database = await testDatabase(dir.dir);
  service = await createChatService({ env: {}, ...database.options });
  await service.bootstrap({ ingestDocs: false });
  const report = await service.knowledge.ingest("demo", [join(fixtures, "help-center")]);
  expect(report).toMatchObject({ added: 12, failed: [] });
});
afterAll(async () => {
  await service.close();
  await database.drop();
  cleanup();
});

describe("retrieval quality with the offline hash embedder", () => {
  it("has the right document in the top 3, above the threshold, for at least 90% of questions", async () => {
    expect(questions.answerable.length).toBeGreaterThanOrEqual(30);
    const misses: string[] = [];
    for (const [question, document] of questions.answerable) {
      const hits = await service.knowledge.search("demo", question, { k: 3 });
      if (!hits.some((h) => h.name === document)) misses.push(`${question} -> ${hits.map((h) => h.name).join(", ") || "(nothing)"}`);
    }
    expect(misses.length / questions.answerable.length, misses.join("\n")).toBeLessThanOrEqual(0.1);
  });

  it("returns nothing above the threshold for questions about absent topics", async () => {
    for (const question of questions.offTopic) {
      expect(await service.knowledge.search("demo", question), question).toEqual([]);
    }
  });

  it("still rejects off-topic questions when two unrelated corpora share a chatbot", async () => {
    const mixed = await service.chatbots.create({ organization_id: (await service.chatbots.get("demo")).organization_id, slug: "mixed", name: "Mixed" });
    await service.knowledge.ingest(mixed.slug, [join(fixtures, "help-center"), join(import.meta.dirname, "..", "..", "docs")]);
    for (const question of questions.offTopic) {
      expect(await service.knowledge.search(mixed.slug, question), question).toEqual([]);
    }
  });

  it("scores in 0..1, best first", async () => {
    const hits = await service.knowledge.search("demo", "How do I verify webhook signatures?", { k: 10, includeBelowThreshold: true });
    expect(hits.length).toBeGreaterThan(3);
    expect(hits[0]).toMatchObject({ name: "webhooks.md", heading: "Webhooks > Verifying signatures", type: "file" });
    for (let i = 0; i < hits.length; i++) {
      expect(hits[i]!.score).toBeGreaterThanOrEqual(0);
      expect(hits[i]!.score).toBeLessThanOrEqual(1);
      if (i > 0) expect(hits[i]!.score).toBeLessThanOrEqual(hits[i - 1]!.score);
    }
  });
});
