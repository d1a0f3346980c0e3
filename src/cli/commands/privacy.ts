import type { Command } from "commander";
import { withService } from "../context.js";
import { parseCount, parseId, printJson, printRecord, printTable } from "../output.js";

export function registerVisitors(program: Command): void {
  const visitors = program.command("visitors").description("Visitors' personal data");

  visitors
    .command("erase")
    .description("Erase one visitor's conversations, messages, leads and webhook payloads in an organisation (one transaction; audited)")
    .requiredOption("--org <id>", "organisation")
    .option("--visitor-id <id>", "the visitor_id the conversations were opened with")
    .option("--email <email>", "the visitor's or a lead's e-mail (case-insensitive)")
    .option("--json", "print the counts as JSON")
    .action(async (opts: { org: string; visitorId?: string; email?: string; json?: boolean }, cmd: Command) => {
      const organizationId = parseId(opts.org, "--org");
      await withService(cmd, async (service) => {
        await service.orgs.get(organizationId);
        const deleted = await service.privacy.eraseVisitor(
          organizationId,
          { ...(opts.visitorId !== undefined && { visitor_id: opts.visitorId }), ...(opts.email !== undefined && { email: opts.email }) },
          { actor: "cli visitors erase" },
        );
        opts.json ? printJson(deleted) : printRecord({ ...deleted });
      });
    });
}

export function registerAudit(program: Command): void {
  const audit = program.command("audit").description("The audit log of erasures and retention passes");

  audit
    .command("list")
    .description("List audit entries, newest first")
    .option("--org <id>", "only this organisation's")
    .option("--limit <n>", "at most this many (1 to 1000, default 100)")
    .option("--json", "print JSON")
    .action(async (opts: { org?: string; limit?: string; json?: boolean }, cmd: Command) => {
      const organizationId = opts.org === undefined ? undefined : parseId(opts.org, "--org");
      const limit = opts.limit === undefined ? undefined : parseCount(opts.limit, "--limit");
      await withService(cmd, async (service) => {
        const entries = await service.privacy.audit({ ...(organizationId !== undefined && { organization_id: organizationId }), ...(limit !== undefined && { limit }) });
        if (opts.json) return printJson(entries);
        const rows = entries.map((e) => ({
          ...e,
          detail: Object.entries(e.detail).map(([k, v]) => `${k}=${String(v)}`).join(" "),
          deleted: `${e.counts.conversations} conversations, ${e.counts.messages} messages, ${e.counts.leads} leads, ${e.counts.webhook_deliveries} deliveries`,
        }));
        printTable(rows, ["id", "created_at", "organization_id", "action", "actor", "detail", "deleted"]);
      });
    });
}
