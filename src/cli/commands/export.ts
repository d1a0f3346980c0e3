import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Command } from "commander";
import { ChatsvcError } from "../../core/errors.js";
import type { ExportFormat } from "../../core/exports.js";
import type { ChatService } from "../../service.js";
import { withService } from "../context.js";
import { parseId } from "../output.js";

interface ExportOptions {
  org?: string;
  format?: string;
  chatbot?: string;
  since?: string;
  until?: string;
  out?: string;
}

/**
 * The organisation an export is for: `--org`, else the `--chatbot`'s, else the
 * only one there is. Several organisations and neither option is a refusal,
 * never a guess.
 */
async function organisationOf(service: ChatService, opts: ExportOptions): Promise<number> {
  if (opts.org !== undefined) return (await service.orgs.get(parseId(opts.org, "--org"))).id;
  if (opts.chatbot !== undefined) {
    const bot = await service.chatbots.find(opts.chatbot);
    if (!bot) throw new ChatsvcError(404, `No chatbot "${opts.chatbot}"`);
    return bot.organization_id;
  }
  const orgs = await service.orgs.list();
  if (orgs.length === 1) return orgs[0]!.id;
  throw new ChatsvcError(422, `This database has ${orgs.length} organisations: name one with --org <id>`);
}

export function registerExport(program: Command): void {
  const exportCommand = program.command("export").description("Export conversations or leads (streamed: any size in bounded memory)");
  for (const what of ["conversations", "leads"] as const) {
    exportCommand
      .command(what)
      .description(
        what === "conversations"
          ? "Conversations with their messages: JSONL (default, one conversation per line) or CSV (one message per row), oldest first"
          : "Leads: CSV (default, one per row) or JSONL, oldest first",
      )
      .option("--org <id>", "organisation (default: the chatbot's, or the only one)")
      .option("--format <format>", `jsonl or csv (default ${what === "conversations" ? "jsonl" : "csv"})`)
      .option("--chatbot <slug>", "only this chatbot's")
      .option("--since <date>", `only ${what} ${what === "conversations" ? "started" : "captured"} at or after this ISO date or date-time`)
      .option("--until <date>", "... and at or before this one")
      .option("--out <file>", "write to this file instead of stdout")
      .action(async (opts: ExportOptions, cmd: Command) => {
        await withService(cmd, async (service) => {
          const organizationId = await organisationOf(service, opts);
          const query = {
            ...(opts.format !== undefined && { format: opts.format as ExportFormat }),
            ...(opts.chatbot !== undefined && { chatbot: opts.chatbot }),
            ...(opts.since !== undefined && { since: opts.since }),
            ...(opts.until !== undefined && { until: opts.until }),
          };
          const exported = await service.exports[what](organizationId, query);
          // pipeline waits for the file (or stdout) to drain before pulling the next page.
          const out = opts.out === undefined ? process.stdout : createWriteStream(opts.out, { mode: 0o600 });
          await pipeline(Readable.from(exported.chunks()), out, { end: opts.out !== undefined });
        });
      });
  }
}
