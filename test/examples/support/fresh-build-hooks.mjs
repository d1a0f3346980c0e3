// Module resolve hook: `chatsvc`, `chatsvc/h3` and `chatsvc/client` load the test build of the current sources.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

let buildDir;
export function initialize(data) {
  buildDir = data.buildDir;
}

export async function resolve(specifier, context, next) {
  const entry = /^chatsvc(?:\/(h3|client))?$/.exec(specifier);
  if (entry) return { url: pathToFileURL(join(buildDir, `${entry[1] ?? "index"}.js`)).href, shortCircuit: true };
  return next(specifier, context);
}
