import type { Command } from "commander";
import type { ChatService } from "../../service.js";
import { ChatsvcError } from "../../core/errors.js";
import { parseCount, parseId, printJson, printTable } from "../output.js";
import { withService } from "../context.js";

interface StatsOptions {
  org?: string;
  since?: string;
  until?: string;
  interval?: string;
  limit: string;
  json?: boolean;
}

const COUNT_COLUMNS = ["conversations", "visitor_messages", "answered", "cannot_answer", "good_ratings", "bad_ratings", "leads", "handoffs"];

/** The organisation a report covers: the chatbot's, `--org`, or the only one there is. */
async function organizationOf(service: ChatService, slug: string | undefined, org: string | undefined): Promise<number> {
  if (slug !== undefined) return (await service.chatbots.get(slug)).organization_id;
  if (org !== undefined) return parseId(org, "--org");
  const orgs = await service.orgs.list();
  if (orgs.length !== 1) throw new ChatsvcError(422, `There are ${orgs.length} organisations: name a chatbot or pass --org <id>`);
  return orgs[0]!.id;
}

export function registerStats(program: Command): void {
  program
    .command("stats [slug]")
    .description("Analytics of a chatbot (or of every chatbot of an organisation): counts per day or week, unanswered questions, cited documents")
    .option("--org <id>", "without a slug: this organisation's chatbots (default: the only organisation)")
    .option("--since <date>", "ISO date or date-time (default: 30 UTC days before --until)")
    .option("--until <date>", "ISO date or date-time; a date includes that whole day (default: now)")
    .option("--interval <day|week>", "bucket size: UTC days, or weeks from Monday", "day")
    .option("--limit <n>", "unanswered questions and documents to show", "10")
    .option("--json", "print one JSON object: overview, unanswered, sources")
    .action(async (slug: string | undefined, opts: StatsOptions, cmd: Command) => {
      const limit = Math.min(Math.max(parseCount(opts.limit, "--limit"), 1), 100);
      await withService(cmd, async (service) => {
        const organizationId = await organizationOf(service, slug, opts.org);
        const range = { chatbot: slug, since: opts.since, until: opts.until };
        const overview = await service.analytics.overview(organizationId, { ...range, interval: opts.interval as "day" });
        const unanswered = await service.analytics.unanswered(organizationId, { ...range, per_page: limit });
        const sources = await service.analytics.sources(organizationId, { chatbot: slug, per_page: limit });
        if (opts.json) return printJson({ overview, unanswered, sources });

        const scope = slug ?? `every chatbot of organisation ${organizationId}`;
        process.stdout.write(`${scope}, ${overview.since} to ${overview.until}, by ${overview.interval} (UTC${overview.interval === "week" ? ", weeks from Monday" : ""})\n\n`);
        const rows = overview.buckets.map((b) => ({ ...b, [overview.interval]: b.start }));
        printTable([...rows, { ...overview.totals, [overview.interval]: "total" }], [overview.interval, ...COUNT_COLUMNS]);
        process.stdout.write(`\nUnanswered questions (cannot_answer or rated bad; ${unanswered.data.length} of ${unanswered.meta.total} groups)\n`);
        printTable(unanswered.data as unknown as Record<string, unknown>[], ["count", "cannot_answer", "bad_ratings", "last_asked_at", "example_conversation_id", "question"]);
        process.stdout.write(`\nSources by citations (${sources.data.length} of ${sources.meta.total} documents)\n`);
        printTable(sources.data as unknown as Record<string, unknown>[], ["cited", "last_cited_at", "chatbot", "name"]);
      });
    });
}
