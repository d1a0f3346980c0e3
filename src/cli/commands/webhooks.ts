import type { Command } from "commander";
import { withService } from "../context.js";
import { parseId, printJson, printTable } from "../output.js";

const WEBHOOK_COLUMNS = ["id", "organization_id", "name", "url", "events", "is_active", "total_triggers", "failed_triggers", "last_triggered_at", "last_failure"];

export function registerWebhooks(program: Command): void {
  const webhooks = program.command("webhooks").description("Inspect outbound webhooks");

  webhooks
    .command("list")
    .description("List webhooks with their delivery statistics")
    .option("--org <id>", "only this organisation's webhooks")
    .option("--json", "print JSON")
    .action(async (opts: { org?: string; json?: boolean }, cmd: Command) => {
      const organizationId = opts.org === undefined ? undefined : parseId(opts.org, "--org");
      await withService(cmd, async (service) => {
        const list = await service.webhooks.list(organizationId);
        const rows = list.map((w) => ({
          ...w,
          // The error names the status when there was one ("HTTP 500", "Redirect (302) not followed").
          last_failure: w.last_failure && `${w.last_failure.at} ${w.last_failure.error}`,
        }));
        opts.json ? printJson(list) : printTable(rows, WEBHOOK_COLUMNS);
      });
    });
}
