import type { Command } from "commander";
import { withService } from "../context.js";
import { parseCount, parseId, printJson, printRecord } from "../output.js";

export function registerCredits(program: Command): void {
  const credits = program.command("credits").description("Monthly credits of an organisation (UTC calendar month)");

  credits
    .command("show")
    .description("Show this month's credits: used, limit, remaining")
    .requiredOption("--org <id>", "organisation id")
    .option("--json", "print JSON")
    .action(async (opts: { org: string; json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const status = await service.credits.status(parseId(opts.org, "organisation id"));
        opts.json ? printJson(status) : printRecord({ ...status });
      });
    });

  credits
    .command("set")
    .description("Set an organisation's monthly credits")
    .requiredOption("--org <id>", "organisation id")
    .requiredOption("--monthly <n>", "credits per month")
    .option("--json", "print JSON")
    .action(async (opts: { org: string; monthly: string; json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const status = await service.credits.setMonthly(parseId(opts.org, "organisation id"), parseCount(opts.monthly, "--monthly"));
        opts.json ? printJson(status) : printRecord({ ...status });
      });
    });
}
