import { readFileSync } from "node:fs";
import type { Command } from "commander";
import type { Chatbot, UpdateChatbotInput } from "../../core/chatbots.js";
import { ChatsvcError } from "../../core/errors.js";
import { withService } from "../context.js";
import { parseId, printJson, printRecord, printTable } from "../output.js";

interface ConfigOpts {
  name?: string;
  displayName?: string;
  description?: string;
  language?: string;
  model?: string;
  instructions?: string;
  allowedOrigins?: string;
  active?: boolean;
  handoffEnabled?: boolean;
  config?: string;
  json?: boolean;
}

function readConfigFile(file: string): Record<string, unknown> {
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch (error) {
    throw new ChatsvcError(422, `Cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    const value = JSON.parse(raw) as unknown;
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error("not an object");
    return value as Record<string, unknown>;
  } catch {
    throw new ChatsvcError(422, `${file} must contain a JSON object of chatbot settings`);
  }
}

/** Settings from `--config` first, then each flag given on top. */
function settingsFrom(opts: ConfigOpts): UpdateChatbotInput {
  return {
    ...(opts.config !== undefined && readConfigFile(opts.config)),
    ...(opts.name !== undefined && { name: opts.name }),
    ...(opts.displayName !== undefined && { display_name: opts.displayName }),
    ...(opts.description !== undefined && { description: opts.description }),
    ...(opts.language !== undefined && { language: opts.language }),
    ...(opts.model !== undefined && { model: opts.model === "default" ? null : opts.model }),
    ...(opts.instructions !== undefined && { instructions: opts.instructions }),
    ...(opts.allowedOrigins !== undefined && {
      allowed_origins: opts.allowedOrigins.split(",").map((s) => s.trim()).filter(Boolean),
    }),
    ...(opts.active !== undefined && { is_active: opts.active }),
    ...(opts.handoffEnabled !== undefined && { handoff_enabled: opts.handoffEnabled }),
  } as UpdateChatbotInput;
}

const show = (bot: Chatbot, json?: boolean) => (json ? printJson(bot) : printRecord({ ...bot }));

export function registerBots(program: Command): void {
  const bots = program.command("bots").description("Manage chatbots");

  const withConfigFlags = (cmd: Command) =>
    cmd
      .option("--display-name <name>", "name shown in the chat header")
      .option("--description <text>", "description")
      .option("--language <code>", "language code, e.g. en")
      .option("--model <spec>", "model for this bot: extractive, ollama:<model>, openai:<model> (or 'default')")
      .option("--instructions <text>", "extra instructions for the model")
      .option("--allowed-origins <list>", "comma-separated origins allowed to embed the widget")
      .option("--handoff-enabled", "let visitors ask for a person (the widget shows a button)")
      .option("--no-handoff-enabled", "do not offer visitors a person")
      .option("--config <file.json>", "JSON file of settings (greeting_message, appearance, ...)")
      .option("--json", "print the record as JSON");

  withConfigFlags(
    bots
      .command("create")
      .description("Create a chatbot")
      .requiredOption("--org <id>", "organisation id")
      .requiredOption("--slug <slug>", "URL name, unique in this install")
      .requiredOption("--name <name>", "name"),
  ).action(async (opts: ConfigOpts & { org: string; slug: string; name: string }, cmd: Command) => {
    await withService(cmd, async (service) => {
      const bot = await service.chatbots.create({ ...settingsFrom(opts), organization_id: parseId(opts.org, "--org"), slug: opts.slug, name: opts.name } as never);
      show(bot, opts.json);
    });
  });

  bots
    .command("list")
    .description("List chatbots")
    .option("--org <id>", "only this organisation")
    .option("--json", "print JSON")
    .action(async (opts: { org?: string; json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const list = await service.chatbots.list(opts.org === undefined ? undefined : parseId(opts.org, "--org"));
        opts.json ? printJson(list) : printTable(list as unknown as Record<string, unknown>[], ["id", "organization_id", "slug", "name", "language", "is_active", "model"]);
      });
    });

  bots
    .command("show <slug>")
    .description("Show a chatbot's settings")
    .option("--json", "print JSON")
    .action(async (slug: string, opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => show(await service.chatbots.get(slug), opts.json));
    });

  withConfigFlags(
    bots
      .command("update <slug>")
      .description("Change a chatbot's settings")
      .option("--name <name>", "name")
      .option("--active", "make the chatbot available")
      .option("--inactive", "take the chatbot offline (403 for chats)"),
  ).action(async (slug: string, opts: ConfigOpts & { inactive?: boolean }, cmd: Command) => {
    await withService(cmd, async (service) => {
      if (opts.inactive) opts.active = false;
      const settings = settingsFrom(opts);
      if (Object.keys(settings).length === 0) throw new ChatsvcError(422, "Nothing to update: give at least one setting (see --help)");
      show(await service.chatbots.update(slug, settings), opts.json);
    });
  });

  bots
    .command("budget <slug>")
    .description("Show or set the chatbot's widget message budgets (a number, 0 for no limit, or 'default')")
    .option("--visitor-per-day <n>", "messages one visitor (client IP) may send per UTC day")
    .option("--per-hour <n>", "messages the chatbot answers per UTC hour, all visitors together")
    .option("--per-day <n>", "messages the chatbot answers per UTC day, all visitors together")
    .option("--json", "print JSON")
    .action(async (slug: string, opts: { visitorPerDay?: string; perHour?: string; perDay?: string; json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const limit = (value: string | undefined) => (value === undefined ? undefined : value === "default" ? null : Number(value));
        const input = { visitor_per_day: limit(opts.visitorPerDay), chatbot_per_hour: limit(opts.perHour), chatbot_per_day: limit(opts.perDay) };
        const bot = await service.chatbots.get(slug);
        const budget = Object.values(input).some((v) => v !== undefined) ? await service.widgetBudgets.set(bot, input) : await service.widgetBudgets.get(bot);
        if (opts.json) return printJson(budget);
        printTable(
          Object.entries(budget.limits).map(([name, value]) => ({ budget: name, limit: value === 0 ? "none" : value, set_by: budget.overrides[name as keyof typeof budget.overrides] === null ? "default" : "chatbot" })),
          ["budget", "limit", "set_by"],
        );
      });
    });

  bots
    .command("delete <slug>")
    .description("Delete a chatbot with its conversations, leads and knowledge")
    .option("--json", "print the result as JSON")
    .action(async (slug: string, opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        await service.chatbots.delete(slug);
        opts.json ? printJson({ slug, deleted: true }) : process.stdout.write(`Deleted chatbot ${slug}.\n`);
      });
    });
}
