import { Command } from "commander";
import { registerBots } from "./commands/bots.js";
import { registerConsoleLink } from "./commands/console-link.js";
import { registerConversations } from "./commands/conversations.js";
import { registerCorrections } from "./commands/corrections.js";
import { registerCredits } from "./commands/credits.js";
import { registerDb } from "./commands/db.js";
import { registerExport } from "./commands/export.js";
import { registerIngest } from "./commands/ingest.js";
import { registerInit } from "./commands/init.js";
import { registerKb } from "./commands/kb.js";
import { registerKeys } from "./commands/keys.js";
import { registerMigrate } from "./commands/migrate.js";
import { registerOpenApi } from "./commands/openapi.js";
import { registerOrgs } from "./commands/orgs.js";
import { registerAudit, registerVisitors } from "./commands/privacy.js";
import { registerServe } from "./commands/serve.js";
import { registerStats } from "./commands/stats.js";
import { registerUsers } from "./commands/users.js";
import { registerWebhooks } from "./commands/webhooks.js";
import { formatError } from "./output.js";
import { version } from "../core/version.js";

/** The `chatsvc` command line. */
export function createProgram(): Command {
  const program = new Command("chatsvc")
    .description("Self-hostable AI chatbot service")
    .version(version)
    .option("--db <file>", "SQLite database file (env CHATSVC_DB)", process.env.CHATSVC_DB)
    .option("--database-url <url>", "PostgreSQL database, postgres://user:password@host/name (env CHATSVC_DATABASE_URL); wins over --db", process.env.CHATSVC_DATABASE_URL || undefined)
    .showHelpAfterError()
    .configureOutput({ outputError: (text, write) => write(text) });
  registerInit(program);
  registerServe(program);
  registerMigrate(program);
  registerDb(program);
  registerOrgs(program);
  registerUsers(program);
  registerBots(program);
  registerKeys(program);
  registerIngest(program);
  registerKb(program);
  registerConversations(program);
  registerCorrections(program);
  registerCredits(program);
  registerWebhooks(program);
  registerExport(program);
  registerVisitors(program);
  registerAudit(program);
  registerStats(program);
  registerOpenApi(program);
  registerConsoleLink(program);
  return program;
}

/** Runs the CLI; a failed command prints one line on stderr and exits non-zero. */
export async function runCli(argv: string[] = process.argv): Promise<void> {
  try {
    await createProgram().parseAsync(argv);
  } catch (error) {
    process.stderr.write(`${formatError(error)}\n`);
    process.exitCode = 1;
  }
}
