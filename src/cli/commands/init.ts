import type { Command } from "commander";
import type { BootstrapResult } from "../../bootstrap.js";
import { ChatsvcError } from "../../core/errors.js";
import { ATTRIBUTION_NOTICE } from "../../core/attribution.js";
import type { ChatService } from "../../service.js";
import { databaseLabel, withService } from "../context.js";
import { printJson } from "../output.js";

/** Prints what first-run setup created, with the key (shown once) and the obligation it carries. */
export function printBootstrap(result: BootstrapResult, write: (s: string) => void = (s) => process.stdout.write(s)): void {
  write(
    `Created organisation ${result.organization.id} (${result.organization.name}), owner ${result.user.email}, ` +
      `chatbot "${result.chatbot.slug}".\n\n` +
      `Your API key (shown only once, keep it on the server side):\n\n  ${result.key.key}\n\n` +
      `By using this key you accept the attribution obligation:\n  ${ATTRIBUTION_NOTICE}\n\n`,
  );
}

/** Runs first-run setup when the database is empty; returns what it created, if anything. */
export async function initIfEmpty(service: ChatService, options: { organizationName?: string; email?: string } = {}): Promise<BootstrapResult | undefined> {
  return service.bootstrapIfEmpty({ ...options, ip: "cli" });
}

export function registerInit(program: Command): void {
  program
    .command("init")
    .description("Set up an empty database: an organisation, its owner, the demo chatbot and an API key")
    .option("--org-name <name>", "organisation name", "My organization")
    .option("--email <email>", "owner's e-mail", "owner@example.com")
    .option("--json", "print what was created as JSON")
    .action(async (opts: { orgName: string; email: string; json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const result = await initIfEmpty(service, { organizationName: opts.orgName, email: opts.email });
        if (!result) throw new ChatsvcError(409, `The database ${databaseLabel(service)} is already initialised; use orgs/users/keys commands to add more`);
        opts.json ? printJson(result) : printBootstrap(result);
      });
    });
}
