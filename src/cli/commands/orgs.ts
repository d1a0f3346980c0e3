import type { Command } from "commander";
import { withService } from "../context.js";
import { parseCount, parseId, printJson, printRecord, printTable } from "../output.js";

export function registerOrgs(program: Command): void {
  const orgs = program.command("orgs").description("Manage organisations");

  orgs
    .command("create")
    .description("Create an organisation")
    .requiredOption("--name <name>", "organisation name")
    .option("--credits <n>", "monthly credits (default 10000)")
    .option("--json", "print the record as JSON")
    .action(async (opts: { name: string; credits?: string; json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const org = await service.orgs.create({ name: opts.name, ...(opts.credits !== undefined && { credits_monthly: parseCount(opts.credits, "--credits") }) });
        opts.json ? printJson(org) : printRecord({ ...org });
      });
    });

  orgs
    .command("list")
    .description("List organisations")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const list = await service.orgs.list();
        opts.json ? printJson(list) : printTable(list as unknown as Record<string, unknown>[], ["id", "name", "credits_monthly", "brand_removal", "retention_days", "created_at"]);
      });
    });

  orgs
    .command("update <id>")
    .description("Update an organisation")
    .option("--name <name>", "new name")
    .option("--credits <n>", "monthly credits")
    .option("--brand-removal", "the organisation bought brand removal: replies carry no branding")
    .option("--no-brand-removal", "replies carry the branding element")
    .option("--retention-days <n|off>", "delete conversations inactive (no message) for more than N days, daily while `serve` runs; `off` keeps them")
    .option("--json", "print the record as JSON")
    .action(async (id: string, opts: { name?: string; credits?: string; brandRemoval?: boolean; retentionDays?: string; json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const org = await service.orgs.update(parseId(id, "organisation id"), {
          ...(opts.name !== undefined && { name: opts.name }),
          ...(opts.credits !== undefined && { credits_monthly: parseCount(opts.credits, "--credits") }),
          ...(opts.brandRemoval !== undefined && { brand_removal: opts.brandRemoval }),
          ...(opts.retentionDays !== undefined && { retention_days: opts.retentionDays === "off" ? null : parseCount(opts.retentionDays, "--retention-days") }),
        });
        opts.json ? printJson(org) : printRecord({ ...org });
      });
    });
}
