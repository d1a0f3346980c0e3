import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;

/**
 * The chatsvc package folder (the one whose package.json is named `chatsvc`),
 * found by walking up from this module: tsup chunks the build, so fixed
 * relative paths to shipped folders (`drizzle/`, `docs/`) break.
 */
export function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "chatsvc") return (root = dir);
    const parent = dirname(dir);
    if (parent === dir) throw new Error("chatsvc: cannot find the package folder (package.json named chatsvc)");
    dir = parent;
  }
}
