import { createRequire } from "node:module";

/** The package version, read from package.json so the two never disagree. */
export const version: string = (createRequire(import.meta.url)("../package.json") as { version: string }).version;
