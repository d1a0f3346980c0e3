import type { Command } from "commander";
import { ChatsvcError } from "../../core/errors.js";
import { ATTRIBUTION_NOTICE } from "../../core/attribution.js";
import type { ApiKey, IssuedApiKey } from "../../core/keys.js";
import { withService } from "../context.js";
import { parseId, printJson, printTable } from "../output.js";

const printIssued = (key: IssuedApiKey, verb: string) => {
  process.stdout.write(
    `${verb} API key ${key.id} (${key.name}) for ${key.email}.\n\n  ${key.key}\n\n` +
      "This is the only time the full key is shown: store it now, on the server side only.\n",
  );
};

const KEY_COLUMNS = ["id", "email", "name", "prefix", "status", "expires_at", "last_used_at", "created_at"];

export function registerKeys(program: Command): void {
  const keys = program.command("keys").description("Manage API keys");

  keys
    .command("create")
    .description("Create an API key (shown once)")
    .requiredOption("--email <email>", "the owner's e-mail")
    .requiredOption("--name <name>", "a name to recognise the key by")
    .option("--expires <date>", "ISO date (valid through that UTC day) or date-time")
    .option("--accept-attribution", "accept the attribution obligation (required)")
    .option("--json", "print the record, with the full key, as JSON")
    .action(async (opts: { email: string; name: string; expires?: string; acceptAttribution?: boolean; json?: boolean }, cmd: Command) => {
      if (!opts.acceptAttribution) {
        throw new ChatsvcError(422, `Creating a key requires accepting the attribution obligation:\n\n  ${ATTRIBUTION_NOTICE}\n\nRun again with --accept-attribution to accept it.`);
      }
      await withService(cmd, async (service) => {
        const key = await service.keys.create({ email: opts.email, name: opts.name, expires_at: opts.expires ?? null, accept_attribution: true, ip: "cli" });
        opts.json ? printJson(key) : printIssued(key, "Created");
      });
    });

  keys
    .command("list")
    .description("List API keys (prefixes only)")
    .option("--email <email>", "only this user's keys")
    .option("--json", "print JSON")
    .action(async (opts: { email?: string; json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const list = await service.keys.list(opts.email === undefined ? {} : { email: opts.email });
        opts.json ? printJson(list) : printTable(list as unknown as Record<string, unknown>[], KEY_COLUMNS);
      });
    });

  keys
    .command("rename <id> <name>")
    .description("Rename a key")
    .option("--json", "print the record as JSON")
    .action(async (id: string, name: string, opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => report(await service.keys.rename(parseId(id, "key id"), name), "Renamed", opts.json));
    });

  for (const [verb, done] of [
    ["disable", "Disabled"],
    ["enable", "Enabled"],
  ] as const) {
    keys
      .command(`${verb} <id>`)
      .description(`${done.slice(0, -1)} a key`)
      .option("--json", "print the record as JSON")
      .action(async (id: string, opts: { json?: boolean }, cmd: Command) => {
        await withService(cmd, async (service) => report(await service.keys[verb](parseId(id, "key id")), done, opts.json));
      });
  }

  keys
    .command("regenerate <id>")
    .description("Replace a key's secret: the old key stops working at once (new key shown once)")
    .option("--json", "print the record, with the full key, as JSON")
    .action(async (id: string, opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const key = await service.keys.regenerate(parseId(id, "key id"));
        opts.json ? printJson(key) : printIssued(key, "Regenerated");
      });
    });

  keys
    .command("delete <id>")
    .description("Delete a key permanently")
    .option("--json", "print the result as JSON")
    .action(async (id: string, opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const keyId = parseId(id, "key id");
        await service.keys.delete(keyId);
        opts.json ? printJson({ id: keyId, deleted: true }) : process.stdout.write(`Deleted API key ${keyId}.\n`);
      });
    });
}

function report(key: ApiKey, verb: string, json?: boolean): void {
  if (json) printJson(key);
  else process.stdout.write(`${verb} API key ${key.id} (${key.name}, ${key.prefix}…): ${key.status}.\n`);
}
