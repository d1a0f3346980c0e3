import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expandQuery } from "../../src/knowledge/expansion.js";
import { related } from "../../src/knowledge/text/thesaurus.js";
import { stem } from "../../src/knowledge/text/tokens.js";
import { createChatService, type ChatService } from "../../src/service.js";
import { tempDir } from "../support/harness.js";

let service: ChatService;
let cleanup: () => void;
beforeAll(async () => {
  const dir = tempDir();
  cleanup = dir.cleanup;
  service = await createChatService({ env: {}, db: join(dir.dir, "kb.db"), logLevel: "warn", renderWorker: false });
  await service.bootstrap({ ingestDocs: false });
  await service.knowledge.ingest("demo", [
    { name: "films.md", content: "# Films\n\nFilms are lent for seven days at the front desk." },
    { name: "bikes.md", content: "# Bikes\n\nBikes are lent for one day at the front desk." },
    { name: "renewals.md", content: "# Renewals\n\nYou can renew an item twice before it is due." },
  ]);
});
afterAll(async () => {
  await service.close();
  cleanup();
});

describe("the WordNet thesaurus", () => {
  it("gives synonyms of a word's common senses, from base forms too", () => {
    expect(related("film")).toContain("movie");
    expect(related("movies")).toContain("film");
    expect(related("kids")).toContain("child");
    expect(related("wireless")).toContain("radio");
    expect(related("qwxzv")).toEqual([]);
  });

  it("expands a question's content words only, never into words it asked", () => {
    const { related: terms, words } = expandQuery("How do I watch films?");
    expect(terms.get(stem("films"))).toContain(stem("movie"));
    expect(words).toContain("movie");
    expect(words).not.toContain("film");
    expect(terms.has("how")).toBe(false);
  });
});

describe("retrieval with query expansion and stemming", () => {
  it("ranks the document that uses a synonym of the asked word first", async () => {
    const hits = await service.knowledge.search("demo", "How long are movies lent?");
    expect(hits[0]?.name).toBe("films.md");
  });

  it("finds an inflected form of the document's word", async () => {
    const hits = await service.knowledge.search("demo", "Which items can be renewed?");
    expect(hits[0]?.name).toBe("renewals.md");
  });
});
