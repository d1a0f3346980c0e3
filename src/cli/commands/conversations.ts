import type { Command } from "commander";
import type { ConversationRecord } from "../../core/conversations.js";
import type { ChatService } from "../../service.js";
import { withService } from "../context.js";
import { parseId, printJson, printRecord } from "../output.js";

const show = (record: ConversationRecord, json?: boolean) =>
  json
    ? printJson(record)
    : printRecord({ id: record.id, status: record.status, chatbot: record.agent.slug, handed_off_at: record.handed_off_at, handoff_reason: record.handoff_reason, last_message_at: record.last_message_at });

/** The conversation's organisation and id: the CLI acts as its owner. */
async function owned(service: ChatService, value: string): Promise<[number, number]> {
  const id = parseId(value, "conversation id");
  return [await service.conversations.organizationOf(id), id];
}

export function registerConversations(program: Command): void {
  const conversations = program.command("conversations").description("Take conversations over from the bot and answer visitors as a person");

  conversations
    .command("handoff <id>")
    .description("A person takes the conversation over: the bot stops answering until release")
    .option("--reason <text>", "why (kept as handoff_reason)")
    .option("--json", "print JSON")
    .action(async (value: string, opts: { reason?: string; json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => show(await service.conversations.handOff(...(await owned(service, value)), { reason: opts.reason ?? null }), opts.json));
    });

  conversations
    .command("release <id>")
    .description("Give the conversation back to the bot")
    .option("--json", "print JSON")
    .action(async (value: string, opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => show(await service.conversations.release(...(await owned(service, value))), opts.json));
    });

  conversations
    .command("reply <id> <message>")
    .description("Answer the visitor as a person (Markdown; an agent message, never branded)")
    .option("--as-agent <name>", "the name the visitor sees")
    .option("--json", "print JSON")
    .action(async (value: string, message: string, opts: { asAgent?: string; json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const [organizationId, id] = await owned(service, value);
        const posted = await service.chat.post(organizationId, id, { message, role: "agent", agent_name: opts.asAgent ?? null });
        opts.json ? printJson(posted) : printRecord({ id: posted.id, role: posted.role, agent_name: posted.agent_name, created_at: posted.created_at });
      });
    });
}
