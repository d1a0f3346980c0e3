import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createChatService } from "../../src/index.js";
import { tempDir } from "../support/harness.js";
import { runExample } from "./support/run-example.js";

describe("examples/ingest-docs", () => {
  it("ingests its sample docs into the demo chatbot and finds the answer; a second run changes nothing", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const db = join(dir, "chatsvc.db");
      const first = await runExample("ingest-docs/ingest.mjs", [], { CHATSVC_DB: db });
      expect(first.code, first.output).toBe(0);
      expect(first.output).toMatch(/sk_live_\w{32}/);
      expect(first.output).toMatch(/added 1, updated 0, unchanged 0/);
      expect(first.output).toMatch(/-> returns\.md .*30 days/);

      const second = await runExample("ingest-docs/ingest.mjs", ["demo"], { CHATSVC_DB: db });
      expect(second.output).toMatch(/added 0, updated 0, unchanged 1/);
      const service = await createChatService({ db, env: {} });
      try {
        expect(await (await service.knowledge.list("demo")).map((d) => d.name)).toContain("returns.md");
      } finally {
        await service.close();
      }
    } finally {
      cleanup();
    }
  });
});
