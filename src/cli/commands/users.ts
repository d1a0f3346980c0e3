import type { Command } from "commander";
import { withService } from "../context.js";
import { parseId, printJson, printRecord, printTable } from "../output.js";

export function registerUsers(program: Command): void {
  const users = program.command("users").description("Manage users (API keys belong to users)");

  users
    .command("create")
    .description("Create a user in an organisation")
    .requiredOption("--org <id>", "organisation id")
    .requiredOption("--email <email>", "e-mail address (identifies the user)")
    .option("--name <name>", "display name")
    .option("--json", "print the record as JSON")
    .action(async (opts: { org: string; email: string; name?: string; json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const user = await service.users.create({ organization_id: parseId(opts.org, "--org"), email: opts.email, ...(opts.name !== undefined && { name: opts.name }) });
        opts.json ? printJson(user) : printRecord({ ...user });
      });
    });

  users
    .command("list")
    .description("List users")
    .option("--org <id>", "only this organisation")
    .option("--json", "print JSON")
    .action(async (opts: { org?: string; json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const list = await service.users.list(opts.org === undefined ? undefined : parseId(opts.org, "--org"));
        opts.json ? printJson(list) : printTable(list as unknown as Record<string, unknown>[], ["id", "organization_id", "email", "name", "created_at"]);
      });
    });
}
