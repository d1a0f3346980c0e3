import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TEST_BUILD_DIR } from "../support/build-cli.js";

/** Every module specifier a built file imports, following the build's own chunks. */
function importsOf(entry: string): Set<string> {
  const seen = new Set<string>();
  const external = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(join(TEST_BUILD_DIR, file), "utf8");
    for (const match of code.matchAll(/\bfrom\s*["']([^"']+)["']|\bimport\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
      const specifier = match[1] ?? match[2] ?? match[3]!;
      if (specifier.startsWith("./")) visit(specifier.slice(2));
      else external.add(specifier);
    }
  };
  visit(entry);
  return external;
}

describe("the chatsvc/client build", () => {
  it("imports nothing but ofetch: no SQLite, no server code, no Node built-ins", () => {
    expect([...importsOf("client.js")]).toEqual(["ofetch"]);
  });

  it("the server entry does import its storage, so the check above can see it", () => {
    expect([...importsOf("index.js")]).toEqual(expect.arrayContaining(["better-sqlite3", "sqlite-vec"]));
  });
});
