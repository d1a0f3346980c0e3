import type { Command } from "commander";
import type { Correction } from "../../core/corrections.js";
import { withService } from "../context.js";
import { parseId, printJson, printTable } from "../output.js";

const COLUMNS = ["id", "question", "answer", "source_name", "updated_at"];
/** Long answers would stretch the table past any terminal; `--json` prints them whole. */
const CELL_CHARS = 60;

const clip = (s: string) => {
  const line = s.replace(/\s+/g, " ").trim();
  return line.length > CELL_CHARS ? `${line.slice(0, CELL_CHARS - 1)}…` : line;
};

interface AddOptions {
  question: string;
  answer: string;
  sourceName?: string;
  sourceUrl?: string;
  json?: boolean;
}

export function registerCorrections(program: Command): void {
  const corrections = program.command("corrections").description("Answer corrections: questions a chatbot answers with a stored answer instead of the model");

  corrections
    .command("add <slug>")
    .description("Add a correction: visitor questions matching --question get --answer (Markdown)")
    .requiredOption("--question <text>", "the question, as a visitor would ask it")
    .requiredOption("--answer <markdown>", "the answer (Markdown)")
    .option("--source-name <name>", "names the correction in replies' sources (default: the question)")
    .option("--source-url <url>", "a link shown with the source")
    .option("--json", "print the correction as JSON")
    .action(async (slug: string, opts: AddOptions, cmd: Command) => {
      await withService(cmd, async (service) => {
        const bot = await service.chatbots.get(slug);
        const created = await service.corrections.create(bot.organization_id, slug, {
          question: opts.question,
          answer: opts.answer,
          source_name: opts.sourceName ?? null,
          source_url: opts.sourceUrl ?? null,
        });
        opts.json ? printJson(created) : process.stdout.write(`Added correction ${created.id} to "${slug}".\n`);
      });
    });

  corrections
    .command("list <slug>")
    .description("List a chatbot's corrections, newest first")
    .option("--json", "print JSON (answers whole)")
    .action(async (slug: string, opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const bot = await service.chatbots.get(slug);
        const all: Correction[] = [];
        for (let page = 1; ; page++) {
          const { data, meta } = await service.corrections.list(bot.organization_id, slug, { page, per_page: 100 });
          all.push(...data);
          if (page >= meta.last_page) break;
        }
        if (opts.json) return printJson(all);
        printTable(all.map((c) => ({ ...c, question: clip(c.question), answer: clip(c.answer) })), COLUMNS);
      });
    });

  corrections
    .command("remove <slug> <id>")
    .description("Remove a correction")
    .option("--json", "print the result as JSON")
    .action(async (slug: string, idArg: string, opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const id = parseId(idArg, "correction id");
        const bot = await service.chatbots.get(slug);
        await service.corrections.delete(bot.organization_id, slug, id);
        opts.json ? printJson({ removed: id, chatbot: slug }) : process.stdout.write(`Removed correction ${id} from "${slug}".\n`);
      });
    });
}
