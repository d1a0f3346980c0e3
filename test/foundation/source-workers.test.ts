import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { once } from "node:events";
import { afterAll, describe, expect, it } from "vitest";
import { startModuleWorker } from "../../src/core/module-worker.js";
import { packageRoot } from "../../src/core/package-root.js";

// Inside the package, as the sources are: the bundle's bare imports resolve from its node_modules.
const dir = mkdtempSync(join(packageRoot(), "node_modules", ".cache", "source-worker-test-"));
const BUNDLES = join(packageRoot(), "node_modules", ".cache", "chatsvc-source-workers");
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  // This file's entries were bundled there too (their source maps name this run's folder): every run would add more.
  for (const file of existsSync(BUNDLES) ? readdirSync(BUNDLES) : []) {
    if (/^entry-[0-9a-f]{16}\.mjs$/.test(file) && readFileSync(join(BUNDLES, file), "utf8").includes(basename(dir))) rmSync(join(BUNDLES, file));
  }
});

async function answer(name: string): Promise<unknown> {
  const worker = startModuleWorker(pathToFileURL(join(dir, "caller.ts")).href, name);
  try {
    const [message] = (await once(worker, "message")) as [unknown];
    return message;
  } finally {
    await worker.terminate();
  }
}

describe("workers started from the TypeScript sources", () => {
  it("run the entry's TypeScript with its imports, and pick up a change to a module it imports", async () => {
    writeFileSync(join(dir, "value.ts"), "export const value: number = 1;\n");
    writeFileSync(
      join(dir, "entry.ts"),
      'import { parentPort } from "node:worker_threads";\nimport { z } from "zod";\nimport { value } from "./value.js";\nparentPort!.postMessage(z.number().parse(value) satisfies number);\n',
    );
    expect(await answer("entry")).toBe(1);
    expect(await answer("entry")).toBe(1);

    writeFileSync(join(dir, "value.ts"), "export const value: number = 2;\n");
    // A later modification time even where the file system's clock is coarse.
    utimesSync(join(dir, "value.ts"), new Date(), new Date(Date.now() + 5_000));
    expect(await answer("entry")).toBe(2);
  });

  it("fail to start with the compile error when the entry does not parse", () => {
    writeFileSync(join(dir, "broken.ts"), "export const = ;\n");
    expect(() => startModuleWorker(pathToFileURL(join(dir, "caller.ts")).href, "broken")).toThrow(/broken\.ts/);
  });
});
