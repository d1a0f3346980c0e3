#!/usr/bin/env bash
# The package as a user gets it: `npm pack`, installed into an empty project. There `chatsvc` and `chatsvc/client`
# import, a service opens and ingests a folder, `npx chatsvc --help` runs, and a TypeScript consumer of `chatsvc/client` compiles with
# `skipLibCheck: false` (the client's declarations must stand alone). Needs a built dist/ and node_modules (CI has both).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

cd "$repo"
tarball="$work/$(npm pack --silent --pack-destination "$work" | tail -n 1)"
version_of() { node -p "require('$repo/node_modules/$1/package.json').version"; }

mkdir "$work/app" && cd "$work/app"
printf '{ "name": "chatsvc-consumer", "private": true, "type": "module" }\n' > package.json
# From npm's cache where CI's `npm ci` left the packages. Scripts off: better-sqlite3 would compile its addon again
# (minutes); the one CI built is reused below when the versions agree.
npm install --prefer-offline --ignore-scripts --no-save "$tarball" "typescript@$(version_of typescript)" "@types/node@$(version_of @types/node)" >/dev/null
if [ "$(version_of better-sqlite3)" = "$(node -p "require('./node_modules/better-sqlite3/package.json').version")" ]; then
  cp -R "$repo/node_modules/better-sqlite3/build" node_modules/better-sqlite3/
else
  npm rebuild better-sqlite3 >/dev/null
fi

cat > check.mjs <<'JS'
import { createChatService } from "chatsvc";
import { ChatsvcError, createClient } from "chatsvc/client";
const service = await createChatService({ db: ":memory:" });
if (!(await service.isEmpty())) throw new Error("a new database should be empty");
// Enough files for ingestion to start its worker (dist/ingest-worker.js) from the installed package.
const organization = await service.orgs.create({ name: "Acme" });
await service.chatbots.create({ organization_id: organization.id, slug: "demo", name: "Demo" });
const { mkdirSync, writeFileSync } = await import("node:fs");
mkdirSync("docs");
for (let i = 0; i < 70; i++) writeFileSync(`docs/page-${i}.md`, `# Page ${i}\nWhat page ${i} says.\n`);
const report = await service.knowledge.ingest("demo", ["docs"]);
if (report.added !== 70 || report.failed.length > 0) throw new Error(`ingestion from the package: ${JSON.stringify(report)}`);
await service.close();
const client = createClient({ baseUrl: "http://127.0.0.1:1/api/v1", apiKey: "sk_live_x" });
if (typeof client.chatbots.send !== "function" || typeof ChatsvcError !== "function") throw new Error("chatsvc/client is incomplete");
console.log("imports ok");
JS
node check.mjs

npx --no-install chatsvc --help | grep -q "Usage: chatsvc"
echo "npx chatsvc --help ok"

cat > consumer.ts <<'TS'
import { ChatsvcError, createClient, type HumanHandledData, type ReplyData, type ReplyStreamEvent } from "chatsvc/client";

const chatsvc = createClient({ baseUrl: "http://127.0.0.1:3000/api/v1", apiKey: process.env.CHATSVC_API_KEY ?? "" });
export async function ask(question: string): Promise<string> {
  const { data: conversation } = await chatsvc.chatbots.startConversation("demo", { visitor_id: "v-1" });
  try {
    const { data, meta }: { data: ReplyData | HumanHandledData; meta: { credits_remaining: number } } = await chatsvc.chatbots.send("demo", conversation.conversation_id, question);
    if (data.reply === null) return "a person will answer";
    return `${data.reply} (${data.sources.length} sources, ${meta.credits_remaining} credits left)`;
  } catch (error) {
    if (error instanceof ChatsvcError && error.status === 429) return "out of credits";
    throw error;
  }
}
export async function* stream(id: number): AsyncGenerator<string> {
  for await (const event of chatsvc.chatbots.stream("demo", id, "hi") as AsyncGenerator<ReplyStreamEvent>) yield event.type === "delta" ? event.text : (event.data.reply ?? "");
}
TS
cat > tsconfig.json <<'JSON'
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "skipLibCheck": false,
    "noEmit": true,
    "types": ["node"]
  },
  "files": ["consumer.ts"]
}
JSON
npx --no-install tsc -p tsconfig.json
echo "chatsvc/client compiles with skipLibCheck false"
