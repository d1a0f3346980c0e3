import type { Command } from "commander";
import { withService } from "../context.js";
import { parseId, printJson, printTable } from "../output.js";

const DOCUMENT_COLUMNS = ["id", "name", "type", "chunk_count", "bytes", "updated_at", "source"];

export function registerKb(program: Command): void {
  const kb = program.command("kb").description("Inspect and maintain knowledge bases");

  kb.command("list <slug>")
    .description("List a chatbot's documents")
    .option("--json", "print JSON")
    .action(async (slug: string, opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const documents = await service.knowledge.list(slug);
        opts.json ? printJson(documents) : printTable(documents as unknown as Record<string, unknown>[], DOCUMENT_COLUMNS);
      });
    });

  kb.command("remove <slug> <document-id>")
    .description("Remove a document and its chunks from a chatbot's knowledge base")
    .option("--json", "print the result as JSON")
    .action(async (slug: string, documentId: string, opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const id = parseId(documentId, "document id");
        await service.knowledge.remove(slug, id);
        opts.json ? printJson({ removed: id, chatbot: slug }) : process.stdout.write(`Removed document ${id} from "${slug}".\n`);
      });
    });

  kb.command("reindex [slug]")
    .description("Re-embed chunks with the configured embedder (all chatbots, or one; after an embedder change, always all)")
    .option("--json", "print the result as JSON")
    .action(async (slug: string | undefined, opts: { json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const result = await service.knowledge.reindex(slug);
        opts.json
          ? printJson({ ...result, embedder: service.config.embedModel })
          : process.stdout.write(`Re-embedded ${result.chunks} chunks with "${service.config.embedModel}" in ${(result.ms / 1000).toFixed(1)} s.\n`);
      });
    });
}
